/**
 * The shared response-cache suite on Redis (`REDIS_URL`, default the local server), under a key
 * prefix of this file's own; plus the key layout, and Redis down or frozen: a miss and a dropped
 * write, never an error, and after the first failure no wait on Redis until it answers again.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { RedisChild } from "../../test/support/redis-child.ts";
import { connectRedis, redisReady } from "../store/redis.ts";
import { StoreHealth } from "../store/store-health.ts";
import { testRedis, type TestRedis } from "../store/test-redis.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import { RedisResponseCache } from "./redis-response-cache.ts";
import { responseCacheCases } from "./response-cache.cases.ts";

let r: TestRedis;
before(async () => {
  r = await testRedis();
});
after(() => r.close());

responseCacheCases("redis", () => ({ cache: new RedisResponseCache(r.redis, silentLogger(), { prefix: r.prefix }), advance: (ms) => sleep(ms) }));

test("redis: an entry is one string under the tenant's hash tag, with a TTL", async () => {
  const cache = new RedisResponseCache(r.redis, silentLogger(), { prefix: r.prefix });
  await cache.put({ tenant: "layout", hash: "abc" }, { completion: "{}" }, 60_000);
  assert.deepEqual(await r.redis.keys(`${r.prefix}{t:layout}*`), [`${r.prefix}{t:layout}:cache:abc`]);
  const ttl = await r.redis.pttl(`${r.prefix}{t:layout}:cache:abc`);
  assert.ok(ttl > 0 && ttl <= 60_000, `pttl ${ttl}`);
});

test("redis unreachable: get resolves undefined, put resolves, nothing throws", async () => {
  // Nothing listens on port 1: every command fails at once (offline queue off).
  const down = connectRedis("redis://127.0.0.1:1", { name: "gearbox-test-down" });
  try {
    const cache = new RedisResponseCache(down, silentLogger());
    await cache.put({ tenant: "t", hash: "h" }, { completion: "{}" }, 60_000);
    assert.equal(await cache.get({ tenant: "t", hash: "h" }), undefined);
  } finally {
    down.disconnect();
  }
});

test("redis gone mid-life (connection closed): a miss, not an error", async () => {
  const client = connectRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", { name: "gearbox-test-gone" });
  await redisReady(client, 5_000);
  const cache = new RedisResponseCache(client, silentLogger(), { prefix: r.prefix });
  await cache.put({ tenant: "t", hash: "gone" }, { completion: "{}" }, 60_000);
  assert.deepEqual(await cache.get({ tenant: "t", hash: "gone" }), { completion: "{}" }, "a hit while connected");
  client.disconnect();
  assert.equal(await cache.get({ tenant: "t", hash: "gone" }), undefined);
  await cache.put({ tenant: "t", hash: "gone" }, { completion: "{}" }, 60_000);
});

test("redis frozen: one command times out, then the cache skips Redis (misses, dropped writes) until a try finds it answering", async () => {
  const server = await RedisChild.start();
  const client = connectRedis(server.url, { name: "gearbox-test-frozen" });
  try {
    await redisReady(client, 5_000);
    const clock = { now: 0 };
    const health = new StoreHealth("cache", silentLogger(), { probeEveryMs: 1_000, now: () => clock.now });
    const cache = new RedisResponseCache(client, silentLogger(), { health });
    const key = { tenant: "t", hash: "frozen" };
    await cache.put(key, { completion: "{}" }, 60_000);
    server.signal("SIGSTOP");
    assert.equal(await cache.get(key), undefined, "the 50 ms command timeout: a miss");
    assert.equal(health.degraded, true);
    for (let i = 0; i < 20; i++) assert.equal(await cache.get(key), undefined);
    await cache.put(key, { completion: "{}" }, 60_000);
    assert.deepEqual({ errors: health.stats.errors, fallbacks: health.stats.fallbacks }, { errors: 1, fallbacks: 22 }, "only the first call waited on Redis");
    server.signal("SIGCONT");
    clock.now = 1_000;
    assert.deepEqual(await cache.get(key), { completion: "{}" }, "the next try finds Redis answering: a hit");
    assert.equal(health.degraded, false);
    assert.deepEqual({ toDegraded: health.stats.toDegraded, toHealthy: health.stats.toHealthy }, { toDegraded: 1, toHealthy: 1 });
  } finally {
    client.disconnect();
    await server.down();
  }
});
