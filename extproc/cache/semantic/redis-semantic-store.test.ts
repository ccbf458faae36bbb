/**
 * The shared semantic-store suite on Redis (`REDIS_URL`, default the local server; real clock),
 * under a key prefix of each test's own; plus the key layout, two replicas on one Redis (the
 * stream carries inserts and deletes), a replica started later rebuilding from Redis, a key
 * evicted behind the store's back, Redis killed and restarted under a running store, and Redis
 * frozen (skipped after its first timeout).
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { connectRedis, redisReady, type Redis } from "../../store/redis.ts";
import { StoreHealth } from "../../store/store-health.ts";
import { testRedis, type TestRedis } from "../../store/test-redis.ts";
import { silentLogger } from "../../../common/telemetry/logger.ts";
import { WorkerIndex } from "./index-client.ts";
import { RedisSemanticStore } from "./redis-semantic-store.ts";
import { DIMENSIONS, axis, entry, eventually, semanticStoreCases, toward, type SemanticStoreHarness } from "./semantic-store.cases.ts";
import { RedisChild } from "../../../test/support/redis-child.ts";

const URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const clock = { now: () => Date.now() };

async function replica(redis: Redis, prefix: string): Promise<{ store: RedisSemanticStore; index: WorkerIndex }> {
  const index = new WorkerIndex({ dimensions: DIMENSIONS, logger: silentLogger() });
  const store = new RedisSemanticStore({ redis, index, logger: silentLogger(), prefix, blockMs: 200 });
  await store.synced();
  return { store, index };
}

async function harness(): Promise<SemanticStoreHarness> {
  const r = await testRedis();
  const { store, index } = await replica(r.redis, r.prefix);
  return {
    store,
    index,
    now: clock.now,
    advance: (ms) => sleep(ms),
    close: async () => {
      await store.close();
      await r.close();
    },
  };
}

semanticStoreCases("redis", harness, { eviction: "the Redis store is bounded by entry TTLs and Redis's maxmemory policy, not max_bytes / max_entries" });

const shared: TestRedis[] = [];
after(async () => {
  for (const r of shared) await r.close();
});

async function sharedRedis(): Promise<TestRedis> {
  const r = await testRedis();
  shared.push(r);
  return r;
}

const ids = async (store: RedisSemanticStore, scope: string, vector: Float32Array) => (await store.nearest(scope, vector, 5, 0.5)).map((m) => m.entry.id);

test("redis: an entry is a hash under its tenant's hash tag, expiring at expiresAt; the stream carries the insert", async () => {
  const r = await sharedRedis();
  const { store } = await replica(r.redis, r.prefix);
  try {
    const e = entry(clock, "s", axis(0), { tenant: "layout" });
    await store.insert(e);
    const key = `${r.prefix}{t:layout}:sc:${e.id}`;
    assert.deepEqual(await r.redis.keys(`${r.prefix}{t:layout}*`), [key]);
    assert.equal(await r.redis.type(key), "hash");
    assert.equal(await r.redis.pexpiretime(key), e.expiresAt);
    assert.equal((await r.redis.hgetBuffer(key, "vector"))?.length, DIMENSIONS * 4);
    const events = await r.redis.xrange(`${r.prefix}sc:events`, "-", "+");
    assert.deepEqual(events.at(-1)?.[1], [
      "op",
      "insert",
      "id",
      e.id,
      "tenant",
      "layout",
      "scope",
      "s",
      "exp",
      String(e.expiresAt),
      "bytes",
      await r.redis.hget(key, "bytes"),
    ]);
  } finally {
    await store.close();
  }
});

test("redis: two replicas on one Redis: an insert on A is found by B, a delete on A leaves B's index", async () => {
  const r = await sharedRedis();
  const redisB = connectRedis(URL, { name: "gearbox-test-replica-b", commandTimeoutMs: 5_000 });
  await redisReady(redisB, 5_000);
  const a = await replica(r.redis, r.prefix);
  const b = await replica(redisB, r.prefix);
  try {
    const e = entry(clock, "s", axis(2));
    await a.store.insert(e);
    assert.deepEqual(
      await eventually(
        () => ids(b.store, "s", axis(2)),
        (got) => got.length > 0,
      ),
      [e.id],
    );
    await a.store.delete(e.id);
    assert.equal(
      await eventually(
        () => Promise.resolve(b.index.has(e.id)),
        (held) => !held,
      ),
      false,
    );
    assert.deepEqual(await ids(b.store, "s", axis(2)), []);
    assert.deepEqual(b.store.stats(), { entries: 0, bytes: 0 });
  } finally {
    await a.store.close();
    await b.store.close();
    redisB.disconnect();
  }
});

test("redis: a replica started after the inserts rebuilds its index from Redis", async () => {
  const r = await sharedRedis();
  const a = await replica(r.redis, r.prefix);
  const written = [entry(clock, "s", axis(0)), entry(clock, "s", toward(0, 0.9)), entry(clock, "t", axis(0), { tenant: "other" })];
  for (const e of written) await a.store.insert(e);
  await a.store.close();
  const c = await replica(r.redis, r.prefix);
  try {
    assert.deepEqual(await ids(c.store, "s", axis(0)), [written[0]!.id, written[1]!.id]);
    assert.deepEqual(await ids(c.store, "t", axis(0)), [written[2]!.id]);
    assert.equal(c.store.stats().entries, 3);
  } finally {
    await c.store.close();
  }
});

test("redis: a key gone behind the store's back (evicted) is a miss and leaves the local index", async () => {
  const r = await sharedRedis();
  const a = await replica(r.redis, r.prefix);
  try {
    const e = entry(clock, "s", axis(5));
    await a.store.insert(e);
    await r.redis.del(`${r.prefix}{t:${e.tenant}}:sc:${e.id}`);
    assert.deepEqual(await ids(a.store, "s", axis(5)), []);
    assert.equal(a.index.has(e.id), false);
  } finally {
    await a.store.close();
  }
});

test("redis killed and restarted: no match and dropped writes meanwhile, never a rejection; then lookups and the stream work again", async () => {
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);
  process.on("unhandledRejection", onRejection);
  const server = await RedisChild.start();
  // Production connection options: 50 ms per command, no offline queue, no retries.
  const redis = connectRedis(server.url);
  await redisReady(redis);
  const s = await replica(redis, "gearbox:");
  let other: Redis | undefined;
  try {
    const before = entry(clock, "s", axis(1));
    await s.store.insert(before);
    assert.deepEqual(await ids(s.store, "s", axis(1)), [before.id]);

    await server.down("SIGKILL");
    assert.deepEqual(await ids(s.store, "s", axis(1)), [], "Redis down: no match");
    await s.store.insert(entry(clock, "s", axis(3)));
    await s.store.delete(before.id);

    await server.up();
    // A fresh Redis: the old entry is gone; new writes are found once the client reconnects.
    const after = entry(clock, "s", axis(4));
    const found = await eventually(
      async () => {
        await s.store.insert(after);
        return ids(s.store, "s", axis(4));
      },
      (got) => got.length > 0,
    );
    assert.deepEqual(found, [after.id]);
    assert.deepEqual(await ids(s.store, "s", axis(1)), []);
    // The follower resumed on the new server: another replica's insert reaches this one.
    other = connectRedis(server.url, { commandTimeoutMs: 5_000 });
    await redisReady(other, 5_000);
    const t = await replica(other, "gearbox:");
    const fromT = entry(clock, "s", axis(6));
    await t.store.insert(fromT);
    await t.store.close();
    assert.deepEqual(
      await eventually(
        () => ids(s.store, "s", axis(6)),
        (got) => got.length > 0,
      ),
      [fromT.id],
    );
    assert.deepEqual(rejections, []);
  } finally {
    process.off("unhandledRejection", onRejection);
    await s.store.close();
    redis.disconnect();
    other?.disconnect();
    await server.down("SIGKILL");
  }
});

test("redis frozen: one lookup waits out the command timeout, later lookups and writes skip Redis until a try finds it answering", async () => {
  const server = await RedisChild.start();
  const redis = connectRedis(server.url);
  await redisReady(redis);
  const probeClock = { now: 0 };
  const health = new StoreHealth("semantic", silentLogger(), { probeEveryMs: 1_000, now: () => probeClock.now });
  const index = new WorkerIndex({ dimensions: DIMENSIONS, logger: silentLogger() });
  const store = new RedisSemanticStore({ redis, index, logger: silentLogger(), prefix: "gearbox:", blockMs: 200, health });
  await store.synced();
  try {
    const kept = entry(clock, "s", axis(2));
    await store.insert(kept);
    assert.deepEqual(await ids(store, "s", axis(2)), [kept.id]);
    server.signal("SIGSTOP");
    assert.deepEqual(await ids(store, "s", axis(2)), [], "frozen: no match");
    for (let i = 0; i < 10; i++) assert.deepEqual(await ids(store, "s", axis(2)), []);
    await store.insert(entry(clock, "s", axis(5)));
    assert.deepEqual(
      { errors: health.stats.errors, fallbacks: health.stats.fallbacks, degraded: health.degraded },
      { errors: 1, fallbacks: 12, degraded: true },
      "only the first lookup waited on Redis",
    );
    server.signal("SIGCONT");
    probeClock.now = 1_000;
    assert.deepEqual(await ids(store, "s", axis(2)), [kept.id], "Redis answers again: the entry is found");
    assert.equal(health.degraded, false);
  } finally {
    await store.close();
    redis.disconnect();
    await server.down("SIGKILL");
  }
});
