/** The response store on the machine's real Redis (`REDIS_URL`), then with Redis unreachable. */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { connectRedis } from "./redis.ts";
import { RedisResponseStore } from "./redis-response-store.ts";
import { responseStoreCases } from "./response-store.cases.ts";
import { testRedis, type TestRedis } from "./test-redis.ts";

let shared: TestRedis | undefined;
after(async () => shared?.close());

responseStoreCases("redis response store", {
  make: async (ttlMs) => {
    shared ??= await testRedis();
    return new RedisResponseStore(shared.redis, { ttlMs }, shared.prefix);
  },
  advance: (ms) => sleep(ms),
  bounded: false,
});

test("redis response store: with Redis unreachable, get and put reject quickly (the caller degrades)", async () => {
  const redis = connectRedis("redis://127.0.0.1:1", { commandTimeoutMs: 50 });
  const store = new RedisResponseStore(redis, { ttlMs: 1000 }, "gbxtest:down:", true);
  const started = Date.now();
  await assert.rejects(store.get("t", "resp_x"));
  await assert.rejects(store.put("t", "resp_x", { messages: [] }));
  assert.ok(Date.now() - started < 2_000, "no hang");
  redis.disconnect();
});
