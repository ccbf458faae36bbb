/** The shared limiter suite on the in-memory store, on a fake clock; its identical-request counters' generations. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { limiterCases } from "./limiter.case.test.ts";
import { MemoryLimiter } from "./memory-limiter.ts";
import { RepeatCounters } from "./repeat-counters.ts";

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

  test("many counters in one generation: each is its own, however the table grew", () => {
    const counters = new RepeatCounters();
    // 50,000 keys in one window (the table grows from 1,024 slots), keys one character apart among them.
    for (let i = 0; i < 50_000; i++) counters.count(`tenant\nfp:${i.toString(16).padStart(32, "0")}`, 60_000, 1_000);
    for (let i = 0; i < 50_000; i += 7) counters.count(`tenant\nfp:${i.toString(16).padStart(32, "0")}`, 60_000, 2_000);
    assert.equal(counters.size, 50_000);
    for (const i of [0, 1, 6, 7, 8, 49_994, 49_999])
      assert.equal(counters.get(`tenant\nfp:${i.toString(16).padStart(32, "0")}`, 3_000)?.count, i % 7 === 0 ? 2 : 1, `key ${i}`);
    assert.equal(counters.get("tenant\nfp:unknown", 3_000), undefined);
    assert.equal(counters.get(`tenant\nfp:${(0).toString(16).padStart(32, "0")}`, 3_000)?.expiresAt, 61_000, "its window is its first request's");
  });

  test("an expired counter starts again at 1; one live in the older generation is counted on there", () => {
    const counters = new RepeatCounters();
    counters.count("a", 1_000, 0);
    counters.count("a", 1_000, 500);
    counters.count("a", 100, 1_200); // rotated at 1,200: "a" (2, until 1,000) is in the older generation, expired
    assert.equal(counters.get("a", 1_201)?.count, 1, "expired: a new window from 1,200");
    assert.equal(counters.get("a", 1_201)?.expiresAt, 1_300);
    counters.count("b", 1_000, 1_900);
    counters.count("b", 1_000, 2_300); // rotated at 2,300: "b" lives on in the older generation
    assert.equal(counters.get("b", 2_400)?.count, 2);
    counters.count("c", 100, 2_400);
    counters.count("c", 100, 2_450);
    assert.equal(counters.get("c", 2_460)?.count, 2);
    counters.count("c", 100, 2_600); // its window (2,400–2,500) over, still in the current generation
    assert.deepEqual(counters.get("c", 2_650), { count: 1, expiresAt: 2_700 }, "started again in place");
    assert.equal(counters.size, 3, "a, b, c: one counter each");
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
