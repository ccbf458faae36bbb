import assert from "node:assert/strict";
import { test } from "node:test";
import { RunawayReplays, type ReplayAnswer } from "./runaway-replay.ts";

const answer = (text: string): ReplayAnswer => ({ contentType: "application/json", body: Buffer.from(text) });

function memo(options: Partial<{ windowMs: number; maxEntries: number; maxBytes: number }> = {}) {
  const clock = { now: 1_000 };
  const replays = new RunawayReplays({ windowMs: 10_000, maxEntries: 100, maxBytes: 1 << 20, ...options }, () => clock.now);
  return { clock, replays };
}

test("a kept answer is replayed for its fingerprint only, until the window has passed", () => {
  const { clock, replays } = memo();
  assert.equal(replays.answer("fp1"), undefined);
  replays.expect("fp1").keep(answer('{"a":1}'));
  assert.deepEqual(replays.answer("fp1"), answer('{"a":1}'));
  assert.equal(replays.answer("fp2"), undefined);
  clock.now += 9_999;
  assert.ok(replays.answer("fp1"));
  clock.now += 1;
  assert.equal(replays.answer("fp1"), undefined);
  assert.equal(replays.size, 0);
  assert.equal(replays.bytes, 0);
});

test("a repeat waits for the recorded answer in flight; a dropped one leaves it nothing", async () => {
  const { replays } = memo();
  const recording = replays.expect("fp");
  const waiting = replays.answer("fp");
  assert.ok(waiting instanceof Promise);
  recording.keep(answer("late"));
  assert.deepEqual(await waiting, answer("late"));
  recording.drop();
  assert.deepEqual(replays.answer("fp"), answer("late"), "the first of keep and drop wins");

  const failing = replays.expect("other");
  const waitingForFailure = replays.answer("other");
  failing.drop();
  assert.equal(await waitingForFailure, undefined);
  assert.equal(replays.answer("other"), undefined);
  assert.equal(replays.inFlight, 0);
});

test("a repeat waits at most the window for an answer in flight", async () => {
  const { replays } = memo({ windowMs: 30 });
  replays.expect("fp");
  const waiting = replays.answer("fp");
  // The memo's timer does not hold the process open (a waiting request's socket does): this one does.
  const alive = setTimeout(() => undefined, 5_000);
  assert.equal(await waiting, undefined);
  clearTimeout(alive);
  assert.equal(replays.inFlight, 0);
});

test("bounded: at most maxEntries answers, oldest out first", () => {
  const { clock, replays } = memo({ maxEntries: 50 });
  for (let i = 0; i < 1_000; i++) {
    clock.now += 1;
    replays.expect(`fp${i}`).keep(answer(`answer ${i}`));
  }
  assert.equal(replays.size, 50);
  assert.equal(replays.answer("fp949"), undefined);
  assert.deepEqual(replays.answer("fp950"), answer("answer 950"));
  assert.deepEqual(replays.answer("fp999"), answer("answer 999"));
});

test("bounded: at most maxBytes; an answer over a quarter of it is not kept (and its waiters get nothing)", async () => {
  const { replays } = memo({ maxBytes: 4_000 });
  const big = replays.expect("big");
  const waiting = replays.answer("big");
  big.keep({ contentType: "application/json", body: Buffer.alloc(1_001 - "application/json".length) });
  assert.equal(await waiting, undefined);
  assert.equal(replays.size, 0);
  for (let i = 0; i < 20; i++) replays.expect(`fp${i}`).keep({ contentType: "text/event-stream", body: Buffer.alloc(900) });
  assert.ok(replays.bytes <= 4_000, `${replays.bytes} bytes held`);
  assert.equal(replays.size, 4);
  assert.ok(replays.answer("fp19"));
});

test("a new recording of a fingerprint takes over: the older one's waiters get nothing, the newer's its answer", async () => {
  const { replays } = memo();
  const first = replays.expect("fp");
  const early = replays.answer("fp");
  const second = replays.expect("fp");
  assert.equal(await early, undefined);
  const late = replays.answer("fp");
  first.keep(answer("first"));
  second.keep(answer("second"));
  assert.deepEqual(await late, answer("second"));
  assert.deepEqual(replays.answer("fp"), answer("second"));
});
