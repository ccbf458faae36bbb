/**
 * The failover's own logic, on a stand-in for Redis that fails on demand (a real Redis stopped
 * and restarted is in `test/governance/limits-redis.test.ts`).
 */
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { FailoverLimiter, type SharedLimiterStore } from "./failover-limiter.ts";
import type { Check, Grant } from "./limiter.ts";
import { MemoryLimiter } from "./memory-limiter.ts";

/** A shared store that is a memory store while up, and rejects everything while down. */
class FlakyShared implements SharedLimiterStore {
  down = false;
  calls = 0;
  readonly inner = new MemoryLimiter();

  private guard<T>(run: () => Promise<T>): Promise<T> {
    this.calls++;
    return this.down ? Promise.reject(new Error("connect ECONNREFUSED")) : run();
  }

  admit = (tenant: string, checks: readonly Check[], ttl: number) => this.guard(() => Promise.resolve(this.inner.admit(tenant, checks, ttl)));
  settle = (grant: Grant, usage: Readonly<Record<string, number>>) => this.guard(() => this.inner.settle(grant, usage));
  renew = (grant: Grant, ttl: number) => this.guard(() => this.inner.renew(grant, ttl));
  throttled = (tenants: readonly string[]) => this.guard(() => this.inner.throttled(tenants));
  ping = () => this.guard(() => Promise.resolve());
}

function setup() {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino(
    { level: "info" },
    new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string }), done()) }),
  );
  const shared = new FlakyShared();
  const local = new MemoryLimiter();
  const failover = new FailoverLimiter(shared, local, logger, 20);
  return { lines, shared, local, failover };
}

const lease: Check = { kind: "lease", key: "conc", limit: 1, label: "tenant/max_concurrent" };
const TTL = 60_000;

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await sleep(10);
}

test("Redis failing: decisions go local at once, counted, one warning; the probe brings Redis back with one info line", async () => {
  const { lines, shared, failover } = setup();
  assert.ok((await failover.admit("shop", [], TTL)).ok);
  assert.equal(shared.calls, 1);
  shared.down = true;
  for (let i = 0; i < 3; i++) assert.ok((await failover.admit(`t${i}`, [lease], TTL)).ok);
  assert.deepEqual(failover.stats, { redisHealthy: false, fallbackDecisions: 3, redisErrors: 1 });
  assert.deepEqual(
    lines.map((l) => l.level),
    [40],
    "one warning for the transition, none per decision",
  );
  shared.down = false;
  await until(() => failover.stats.redisHealthy);
  assert.match(lines[1]?.msg ?? "", /Redis answers again/);
  const callsBefore = shared.calls;
  assert.ok((await failover.admit("shop", [], TTL)).ok);
  assert.equal(shared.calls, callsBefore + 1);
  assert.equal(failover.stats.fallbackDecisions, 3);
  failover.close();
});

test("a grant is settled where it was made: local grants stay local after Redis is back", async () => {
  const { shared, failover } = setup();
  shared.down = true;
  const admission = await failover.admit("shop", [lease], TTL);
  assert.ok(admission.ok);
  shared.down = false;
  await until(() => failover.stats.redisHealthy);
  const calls = shared.calls;
  await failover.renew(admission.grant, TTL);
  await failover.settle(admission.grant, {});
  assert.equal(shared.calls, calls, "the local grant never went to Redis");
  // Its lease was released locally: Redis being down again, the slot is free.
  shared.down = true;
  assert.ok((await failover.admit("shop", [lease], TTL)).ok);
  failover.close();
});

test("a Redis grant whose settlement fails is counted and marks Redis down, without throwing", async () => {
  const { shared, failover } = setup();
  const admission = await failover.admit("shop", [lease], TTL);
  assert.ok(admission.ok);
  shared.down = true;
  await failover.settle(admission.grant, {});
  await failover.renew(admission.grant, TTL);
  assert.equal(failover.stats.redisErrors, 2);
  assert.equal(failover.stats.redisHealthy, false);
  assert.deepEqual(await failover.throttled(["shop"]), []);
  failover.close();
});

test("a failover and a recovery keep this replica's windows: a rate limit is never passed across them", async () => {
  const { shared, failover } = setup();
  const rate: Check = { kind: "rate", key: "rps", limit: 3, windowMs: 60_000, label: "tenant/requests_per_minute" };
  const admitted = async () => (await failover.admit("shop", [rate], TTL)).ok;
  assert.deepEqual([await admitted(), await admitted()], [true, true], "two admitted on Redis");
  shared.down = true;
  assert.deepEqual([await admitted(), await admitted()], [true, false], "locally, the two Redis admissions still count: one more, not three");
  shared.down = false;
  await until(() => failover.stats.redisHealthy);
  assert.equal(await admitted(), false, "back on Redis (which saw two), the local admission still counts");
  assert.equal(failover.stats.redisHealthy, true);
  failover.close();
});

test("a Redis grant's local mirror is settled with it: a concurrency slot freed on Redis is free locally", async () => {
  const { shared, failover } = setup();
  const one: Check = { ...lease, limit: 1 };
  const first = await failover.admit("shop", [one], TTL);
  assert.ok(first.ok);
  await failover.settle(first.grant, {});
  shared.down = true;
  assert.ok((await failover.admit("shop", [one], TTL)).ok, "the mirror's lease was released with the Redis grant");
  failover.close();
});

test("invalid input rejects without marking Redis down", async () => {
  const { failover } = setup();
  await assert.rejects(failover.admit("a{b}", [lease], TTL), /hash tag/);
  assert.deepEqual(failover.stats, { redisHealthy: true, fallbackDecisions: 0, redisErrors: 0 });
  failover.close();
});
