/** The sequence pool: one holder per value, waiters in order, aborts while waiting. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Pool } from "./llamacpp-pool.ts";

const never = new AbortController().signal;

test("values are lent one holder at a time and waiters are served in order", async () => {
  const pool = new Pool(["s0"]);
  const first = await pool.acquire(never);
  assert.equal(first.value, "s0");
  const order: string[] = [];
  const second = pool.acquire(never).then((l) => (order.push("second"), l));
  const third = pool.acquire(never).then((l) => (order.push("third"), l));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, []);
  first.release();
  first.release(); // idempotent: does not free the value twice
  const l2 = await second;
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, ["second"]);
  l2.release();
  (await third).release();
  assert.equal(pool.busy, 0);
});

test("an abort while waiting rejects with the reason and leaves the queue", async () => {
  const pool = new Pool([1]);
  const held = await pool.acquire(never);
  const controller = new AbortController();
  const waiting = pool.acquire(controller.signal);
  const next = pool.acquire(never);
  controller.abort(new Error("client gone"));
  await assert.rejects(waiting, /client gone/);
  held.release();
  assert.equal((await next).value, 1);
  await assert.rejects(pool.acquire(AbortSignal.abort()), (err: Error) => err.name === "AbortError");
});

test("whenIdle resolves once every value is back", async () => {
  const pool = new Pool([1, 2]);
  const a = await pool.acquire(never);
  const b = await pool.acquire(never);
  let idle = false;
  const done = pool.whenIdle().then(() => (idle = true));
  a.release();
  await new Promise((r) => setImmediate(r));
  assert.equal(idle, false);
  b.release();
  await done;
  assert.equal(idle, true);
});
