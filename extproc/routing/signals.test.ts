import assert from "node:assert/strict";
import { test } from "node:test";
import { CloudSpend, LatencyWindow, StickyTargets } from "./signals.ts";

test("sticky targets: remembered per conversation, bounded, expiring", () => {
  const sticky = new StickyTargets(2, 1000);
  sticky.set("a", "edge", 0);
  sticky.set("b", "cloud", 0);
  assert.equal(sticky.get("a", 10), "edge");
  sticky.set("c", "edge", 20); // over the bound: the least recently written ("a") goes
  assert.equal(sticky.size, 2);
  assert.equal(sticky.get("a", 30), undefined);
  assert.equal(sticky.get("b", 30), "cloud");
  assert.equal(sticky.get("c", 30), "edge");
  assert.equal(sticky.get("c", 5000), undefined, "expired");
  assert.equal(sticky.get(undefined), undefined);
});

test("latency window: median of the recent samples, none until there are enough", () => {
  const w = new LatencyWindow(5);
  for (const ms of [100, 200, 300, 400]) w.record(ms);
  assert.equal(w.p50(), undefined);
  w.record(500);
  assert.equal(w.p50(), 300);
  for (const ms of [2000, 2100, 2200]) w.record(ms);
  assert.equal(w.p50(), 2000, "old samples roll out");
});

test("cloud spend: adds up within a UTC month, starts again in the next, ignores nonsense", () => {
  const spend = new CloudSpend();
  const nov = Date.UTC(2026, 10, 30, 23, 59);
  spend.add(120, nov);
  spend.add(0.5, nov);
  spend.add(-3, nov);
  spend.add(Number.NaN, nov);
  assert.equal(spend.spentUsd(nov), 120.5);
  assert.equal(spend.fraction(200, nov), 0.6025);
  assert.equal(spend.spentUsd(Date.UTC(2026, 11, 1, 0, 1)), 0, "December starts at zero");
});

test("latency window: the kept-sorted median equals a sort of the last samples, duplicates included", () => {
  const size = 17;
  const w = new LatencyWindow(size);
  const recent: number[] = [];
  let seed = 7;
  for (let i = 0; i < 500; i++) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    const ms = seed % 40; // few distinct values: many duplicates leave and arrive
    w.record(ms);
    recent.push(ms);
    if (recent.length > size) recent.shift();
    const expected = recent.length < 5 ? undefined : [...recent].sort((a, b) => a - b)[Math.floor(recent.length / 2)];
    assert.equal(w.p50(), expected, `after ${i + 1} samples`);
  }
});
