import assert from "node:assert/strict";
import { test } from "node:test";
import { GatewayError } from "../common/errors.ts";
import { Capacity } from "./capacity.ts";

const never = new AbortController().signal;

test("runs up to maxConcurrent, queues up to maxQueue, refuses the rest at once with 429 + retry-after", async () => {
  const cap = new Capacity("m", { maxConcurrent: 2, maxQueue: 1, retryAfterSeconds: 3 });
  const a = await cap.acquire(never);
  const b = await cap.acquire(never);
  assert.equal(cap.inflight, 2);
  let cGranted = false;
  const c = cap.acquire(never).then((release) => {
    cGranted = true;
    return release;
  });
  assert.equal(cap.queued, 1);
  await assert.rejects(
    cap.acquire(never),
    (err: unknown) => err instanceof GatewayError && err.status === 429 && err.headers["retry-after"] === "3" && err.code === "edge_saturated",
  );
  a();
  const releaseC = await c;
  assert.ok(cGranted);
  assert.equal(cap.inflight, 2);
  a(); // releasing twice is harmless
  assert.equal(cap.inflight, 2);
  b();
  releaseC();
  assert.equal(cap.inflight, 0);
});

test("a queued caller that goes away leaves the queue", async () => {
  const cap = new Capacity("m", { maxConcurrent: 1, maxQueue: 2, retryAfterSeconds: 1 });
  const release = await cap.acquire(never);
  const abort = new AbortController();
  const waiting = cap.acquire(abort.signal);
  assert.equal(cap.queued, 1);
  abort.abort();
  await assert.rejects(waiting, (err: unknown) => err instanceof GatewayError && err.code === "client_closed");
  assert.equal(cap.queued, 0);
  release();
  assert.equal(cap.inflight, 0, "the slot is not handed to the caller that left");
});
