/**
 * Cost alerts: a tenant's `alert_at` thresholds (fractions of `daily_cost_usd`). When an
 * admission shows the day's committed and reserved cost past a threshold, one warning is logged
 * per tenant, threshold and UTC day on this replica (each replica alerts once; log pipelines
 * deduplicate), and the count is kept for the metrics.
 */
import type { Logger } from "../../common/telemetry/logger.ts";
import type { Tenant } from "./model.ts";

export class CostAlerts {
  /** `tenant` → [UTC day, highest threshold already alerted]. */
  private readonly alerted = new Map<string, [string, number]>();
  fired = 0;

  constructor(private readonly logger: Logger) {}

  /** `spentFraction`: the share of the tenant's daily cap used, reservations included. */
  observe(tenant: Tenant, spentFraction: number, now = Date.now()): void {
    const thresholds = tenant.alert_at;
    if (!thresholds || thresholds.length === 0 || tenant.limits.daily_cost_usd === undefined) return;
    const day = new Date(now).toISOString().slice(0, 10);
    const previous = this.alerted.get(tenant.id);
    const done = previous?.[0] === day ? previous[1] : 0;
    let crossed = 0;
    for (const t of thresholds) if (spentFraction >= t && t > crossed) crossed = t;
    if (crossed <= done) return;
    this.alerted.set(tenant.id, [day, crossed]);
    this.fired++;
    this.logger.warn(
      { tenant: tenant.id, threshold: crossed, spent_fraction: Math.round(spentFraction * 1000) / 1000, daily_cost_usd: tenant.limits.daily_cost_usd },
      "tenant crossed a daily cost alert threshold",
    );
  }
}
