/**
 * The demo end to end with a shorter script: the table's totals agree with the gateway's own
 * request log (counts by route, cache hits, refusals, cost), the cloud stand-in was called once
 * per cloud row, and the printed lines say what is fake.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { DEMO_SCRIPT } from "./script.ts";
import { runDemo } from "./run.ts";

const pick = (...labels: string[]) =>
  labels.map((label) => {
    const step = DEMO_SCRIPT.find((s) => s.label === label);
    assert.ok(step, label);
    return step;
  });

test("the demo's totals are the request log's, and it says what is a stand-in", async () => {
  const lines: string[] = [];
  const script = pick("short summary", "math", "math (repeat)", "forced edge", "trial tenant 1", "trial tenant 2");
  const result = await runDemo({ script, out: (line) => lines.push(line), banner: false });
  const { rows, totals, log } = result;
  assert.equal(rows.length, script.length);
  assert.equal(log.length, script.length);
  // Counts by route, from the log alone.
  const byRoute = { edge: 0, cloud: 0, cache: 0, "-": 0 };
  for (const line of log) byRoute[line.route ?? "-"]++;
  assert.deepEqual(totals.byRoute, byRoute);
  assert.equal(totals.cacheHits, log.filter((l) => l.cache === "hit").length);
  assert.equal(totals.upgrades, log.filter((l) => l.cascade?.upgraded === true).length);
  const cost = log.reduce((sum, l) => sum + (l.cost_usd ?? 0), 0);
  assert.equal(totals.costUsd.toFixed(9), cost.toFixed(9));
  assert.ok(totals.allCloudUsd >= totals.costUsd);
  // Every cloud answer (upgrades included) was one call to the stand-in; cache hits and edge answers none.
  assert.equal(result.cloudCalls, byRoute.cloud);
  // What the script is there to show, as the gateway recorded it.
  assert.equal(log[2]?.cache, "hit", "the repeated math question is a cache hit");
  assert.equal(log[3]?.route, "edge", "the forced edge stays on the edge");
  assert.equal(log[3]?.reason, "client_hint:edge");
  assert.equal(rows[5]?.status, 429, "the trial tenant's second request within the second is refused");
  assert.equal(log[5]?.tenant, "trial");
  // The printed totals are the computed ones, and the fakes are named.
  const text = lines.join("\n");
  assert.match(text, new RegExp(`requests ${script.length}: edge ${byRoute.edge}, cloud ${byRoute.cloud} \\(${totals.upgrades} upgraded`));
  assert.match(text, /STAND-IN/);
  assert.match(text, /random bytes/);
  // It ends with gearbox report on its own log: the report's totals are the log's.
  const report = JSON.parse(readFileSync(result.report.json, "utf8")) as {
    requests: { total: number; by_route: Record<string, number> };
    cost: { actual_usd: number };
  };
  assert.equal(report.requests.total, script.length);
  assert.deepEqual(report.requests.by_route, { edge: byRoute.edge, cloud: byRoute.cloud, cache: byRoute.cache, none: byRoute["-"] });
  assert.equal(report.cost.actual_usd.toFixed(6), cost.toFixed(6));
  assert.ok(
    lines.some((l) => l.includes(result.report.html)),
    "the demo prints where the report is",
  );
});
