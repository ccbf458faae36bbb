/**
 * The shared limiter suite on Redis (`REDIS_URL`, default the local server), on the server's
 * clock, under a key prefix of this file's own; plus what only Redis has: the key layout.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { limiterCases } from "./limiter.case.test.ts";
import { RedisLimiter } from "./redis-limiter.ts";
import { testRedis, type TestRedis } from "./test-redis.ts";

let r: TestRedis;
before(async () => {
  r = await testRedis();
});
after(() => r.close());

limiterCases("redis", () => ({ store: new RedisLimiter(r.redis, { prefix: r.prefix }), now: () => Date.now(), advance: (ms) => sleep(ms) }));

test("redis: every key of an admission carries the tenant's hash tag (one Cluster slot)", async () => {
  const store = new RedisLimiter(r.redis, { prefix: r.prefix });
  const admission = await store.admit(
    "layout",
    [
      { kind: "repeat", key: "fp:1", limit: 5, windowMs: 60_000, label: "tenant/runaway" },
      { kind: "lease", key: "conc", limit: 5, label: "tenant/max_concurrent" },
      { kind: "rate", key: "k:key_1:rps", limit: 5, windowMs: 1_000, label: "key:key_1/requests_per_second" },
      { kind: "budget", key: "usd", limit: 5, amount: 1, windowMs: 86_400_000, meter: "nano_usd", label: "tenant/daily_cost_usd" },
      { kind: "rate", key: "rps", limit: 1, windowMs: 60_000, label: "tenant/requests_per_second" },
    ],
    60_000,
  );
  assert.ok(admission.ok);
  assert.ok(!(await store.admit("layout", [{ kind: "rate", key: "rps", limit: 1, windowMs: 60_000, label: "tenant/requests_per_second" }], 60_000)).ok);
  const keys = (await r.redis.keys(`${r.prefix}{t:layout}*`)).map((k) => k.slice(r.prefix.length)).sort();
  assert.deepEqual(keys, [
    "{t:layout}:conc",
    "{t:layout}:denied",
    "{t:layout}:fp:1",
    "{t:layout}:k:key_1:rps",
    "{t:layout}:rps",
    "{t:layout}:usd",
    "{t:layout}:usd:exp",
  ]);
  for (const key of keys) assert.ok((await r.redis.pttl(r.prefix + key)) > 0, `${key} expires`);
});
