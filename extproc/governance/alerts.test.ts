import assert from "node:assert/strict";
import { test } from "node:test";
import { pino } from "pino";
import { CostAlerts } from "./alerts.ts";
import type { Tenant } from "./model.ts";

const tenant: Tenant = { id: "shop", limits: { daily_cost_usd: 10 }, alert_at: [0.5, 0.8], degrade_to_edge: false, source: "config" };

test("each threshold alerts once per day, the highest crossed wins, a new day starts again", () => {
  const lines: Record<string, unknown>[] = [];
  const alerts = new CostAlerts(pino({ level: "info" }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) }));
  const day1 = Date.UTC(2026, 10, 30, 12);
  alerts.observe(tenant, 0.3, day1);
  assert.equal(lines.length, 0);
  alerts.observe(tenant, 0.55, day1);
  alerts.observe(tenant, 0.6, day1);
  assert.equal(lines.length, 1);
  assert.equal(lines[0]?.threshold, 0.5);
  alerts.observe(tenant, 0.95, day1);
  assert.equal(lines.length, 2);
  assert.equal(lines[1]?.threshold, 0.8);
  alerts.observe(tenant, 0.99, day1);
  assert.equal(lines.length, 2, "nothing above 0.8 left to cross");
  alerts.observe(tenant, 0.6, Date.UTC(2026, 11, 1, 1));
  assert.equal(lines.length, 3, "a new UTC day");
  assert.equal(alerts.fired, 3);
});

test("no thresholds or no cap: never alerts", () => {
  const lines: string[] = [];
  const alerts = new CostAlerts(pino({ level: "info" }, { write: (l: string) => void lines.push(l) }));
  alerts.observe({ ...tenant, alert_at: undefined }, 0.99);
  alerts.observe({ ...tenant, limits: {} }, 0.99);
  assert.equal(lines.length, 0);
});

test("through the governor: admissions that reserve past a threshold alert once", async () => {
  const { Governor } = await import("./governor.ts");
  const { MemoryLimiter } = await import("../store/memory-limiter.ts");
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: "info" }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
  const governor = new Governor({ store: new MemoryLimiter(), runaway: { enable: false, window_ms: 1000, max_identical: 1 }, logger });
  const caller = { tenant: { ...tenant, limits: { daily_cost_usd: 1 }, alert_at: [0.5] }, via: "anonymous" as const };
  const estimate = { inputTokens: 10, maxOutputTokens: 10, costUsd: 0.3 };
  for (let i = 0; i < 3; i++) {
    const decision = await governor.admit({ caller, model: "m", estimate, target: "cloud" });
    assert.ok(decision.ok);
    await decision.ticket.settle({ inputTokens: 10, outputTokens: 10, costUsd: 0.3 });
  }
  governor.close();
  assert.equal(governor.alerts.fired, 1);
  assert.equal(lines.filter((l) => l.msg === "tenant crossed a daily cost alert threshold").length, 1);
});
