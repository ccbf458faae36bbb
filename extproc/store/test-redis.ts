/**
 * For tests of Redis-backed stores: a connection to `REDIS_URL` (default the local server) and a
 * key prefix of its own, so parallel test files never share keys; `close` deletes the prefix's
 * keys and disconnects. `dump` renders every key and value under the prefix as text.
 */
import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import { connectRedis, redisReady } from "./redis.ts";

export interface TestRedis {
  redis: Redis;
  prefix: string;
  /** Every key under the prefix with its value, one per line. */
  dump: () => Promise<string>;
  close: () => Promise<void>;
}

export async function testRedis(): Promise<TestRedis> {
  const redis = connectRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", { commandTimeoutMs: 5_000, name: "gearbox-test" });
  await redisReady(redis, 5_000);
  const prefix = `gbxtest:${randomBytes(6).toString("hex")}:`;
  const keys = () => redis.keys(`${prefix}*`);
  return {
    redis,
    prefix,
    dump: async () => {
      const lines = await Promise.all((await keys()).map(async (key) => `${key} ${JSON.stringify(await valueOf(redis, key))}`));
      return lines.join("\n");
    },
    close: async () => {
      const all = await keys();
      if (all.length > 0) await redis.del(...all);
      await redis.quit();
    },
  };
}

async function valueOf(redis: Redis, key: string): Promise<unknown> {
  const type = await redis.type(key);
  switch (type) {
    case "string":
      return redis.get(key);
    case "set":
      return redis.smembers(key);
    case "hash":
      return redis.hgetall(key);
    case "stream":
      return redis.xrange(key, "-", "+");
    default:
      throw new Error(`test dump: no reader for Redis type '${type}' (${key})`);
  }
}
