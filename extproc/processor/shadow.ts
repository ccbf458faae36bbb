/**
 * Shadow mode's scope (`shadow:` in the config): which requests Gearbox only observes. A request
 * is shadowed when shadow mode is on, its endpoint is listed (or none are), and its tenant is
 * listed (or none are). With a tenant list, a caller not yet known (before authentication, or
 * failing it) is not shadowed: it gets Gearbox's real answer.
 */
import type { GatewayConfig } from "../config/load.ts";

export function isShadowed(config: GatewayConfig, endpoint: string, tenant: string | undefined): boolean {
  const shadow = config.shadow;
  if (!shadow.enable) return false;
  if (shadow.endpoints.length > 0 && !(shadow.endpoints as readonly string[]).includes(endpoint)) return false;
  return shadow.tenants.length === 0 || (tenant !== undefined && shadow.tenants.includes(tenant));
}
