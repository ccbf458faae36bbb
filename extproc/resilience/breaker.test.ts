import assert from "node:assert/strict";
import { test } from "node:test";
import { CircuitBreaker, type BreakerState } from "./breaker.ts";
import type { BreakerConfig } from "./config-schema.ts";

const SETTINGS: BreakerConfig = {
  enable: true,
  failure_threshold: 3,
  failure_ratio: 0.5,
  min_calls: 10,
  window_ms: 10_000,
  open_ms: 1000,
  half_open_probes: 1,
};

function setup(settings: Partial<BreakerConfig> = {}) {
  let t = 0;
  const moves: string[] = [];
  const breaker = new CircuitBreaker(
    { ...SETTINGS, ...settings },
    () => t,
    ({ from, to }) => moves.push(`${from}>${to}`),
  );
  return { breaker, moves, advance: (ms: number) => void (t += ms) };
}

test("closed → open after failure_threshold consecutive failures; open refuses calls", () => {
  const { breaker, moves } = setup();
  breaker.failure();
  breaker.failure();
  breaker.success();
  breaker.failure();
  breaker.failure();
  assert.equal(breaker.state, "closed", "a success resets the consecutive count");
  breaker.failure();
  assert.equal(breaker.state, "open");
  assert.equal(breaker.tryAcquire(), false);
  assert.deepEqual(moves, ["closed>open"]);
});

test("the failure ratio over the window opens it too, once the window holds min_calls", () => {
  const { breaker } = setup({ failure_threshold: 100 });
  for (let i = 0; i < 4; i++) {
    breaker.success();
    breaker.failure();
  }
  assert.equal(breaker.state, "closed", "8 calls: under min_calls");
  breaker.success();
  breaker.failure();
  assert.equal(breaker.state, "open", "5 of 10 failed");
});

test("half-open after open_ms: one probe at a time; its success closes, its failure reopens", () => {
  const { breaker, moves, advance } = setup();
  for (let i = 0; i < 3; i++) breaker.failure();
  advance(999);
  assert.equal(breaker.state, "open");
  advance(1);
  assert.equal(breaker.state, "half_open");
  assert.equal(breaker.tryAcquire(), true, "the probe");
  assert.equal(breaker.tryAcquire(), false, "only one probe at a time");
  breaker.failure();
  assert.equal(breaker.state, "open");
  advance(1000);
  assert.equal(breaker.tryAcquire(), true);
  breaker.success();
  assert.equal(breaker.state satisfies BreakerState, "closed");
  assert.equal(breaker.tryAcquire(), true);
  assert.deepEqual(moves, ["closed>open", "open>half_open", "half_open>open", "open>half_open", "half_open>closed"]);
});

test("a probe that never reports frees its slot after open_ms", () => {
  const { breaker, advance } = setup();
  for (let i = 0; i < 3; i++) breaker.failure();
  advance(1000);
  assert.equal(breaker.tryAcquire(), true);
  advance(999);
  assert.equal(breaker.tryAcquire(), false);
  advance(1);
  assert.equal(breaker.tryAcquire(), true);
});

test("disabled: never opens", () => {
  const { breaker } = setup({ enable: false });
  for (let i = 0; i < 50; i++) breaker.failure();
  assert.equal(breaker.tryAcquire(), true);
  assert.equal(breaker.state, "closed");
});
