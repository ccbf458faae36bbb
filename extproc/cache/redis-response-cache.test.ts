/**
 * The shared response-cache suite on Redis (`REDIS_URL`, default the local server), under a key
 * prefix of this file's own; plus the key layout, and Redis down: a miss and a dropped write,
 * never an error.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { connectRedis, redisReady } from "../store/redis.ts";
import { testRedis, type TestRedis } from "../store/test-redis.ts";
import { silentLogger } from "../telemetry/logger.ts";
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
