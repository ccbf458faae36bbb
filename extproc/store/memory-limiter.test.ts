/** The shared limiter suite on the in-memory store, on a fake clock; its identical-request counters' generations. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { limiterCases } from "./limiter.case.test.ts";
import { MemoryLimiter, RepeatCounters } from "./memory-limiter.ts";

limiterCases("memory", () => {
  let now = Date.UTC(2026, 0, 1);
  return {
    store: new MemoryLimiter(() => now),
    now: () => now,
    advance: (ms) => {
      now += ms;
      return Promise.resolve();
    },
  };
});

describe("RepeatCounters", () => {
  test("a counter started late in a generation lives its whole window across the rotation", () => {
    const counters = new RepeatCounters();
    counters.count("a", 1_000, 0);
    counters.count("b", 1_000, 999);
    counters.count("b", 1_000, 1_500);
    assert.equal(counters.get("b", 1_998)?.count, 2, "rotated to the older generation at 1,000 ms, still live");
    assert.equal(counters.get("b", 1_999), undefined, "its window (started at 999 ms) is over");
    assert.equal(counters.get("a", 1_000), undefined);
  });

  test("holds at most two windows of distinct requests, whatever was counted before", () => {
    const counters = new RepeatCounters();
    for (let t = 0; t < 100_000; t++) counters.count(`k${t}`, 1_000, t);
    assert.ok(counters.size <= 2_000, `${counters.size} counters held for 1,000 requests per window`);
    assert.equal(counters.get("k99999", 100_500)?.count, 1);
    counters.get("x", 1_000_000);
    assert.equal(counters.size, 0, "idle for two windows: nothing is kept");
  });

  test("a longer window lengthens the generations; a clock stepped back does not hold rotation off", () => {
    const counters = new RepeatCounters();
    counters.count("short", 100, 0);
    counters.count("long", 10_000, 50);
    assert.equal(counters.get("long", 9_000)?.count, 1, "kept past the short window's generations");
    counters.count("long", 10_000, 9_500);
    assert.equal(counters.get("long", 10_049)?.count, 2);
    assert.equal(counters.get("long", 10_050), undefined);
    counters.count("back", 10_000, 5_000);
    assert.equal(counters.get("back", 5_001)?.count, 1);
    for (let t = 5_000; t < 40_000; t += 10) counters.count(`s${t}`, 10_000, t);
    assert.ok(counters.size <= 2_000, `${counters.size} held after the clock stepped back`);
  });
});
