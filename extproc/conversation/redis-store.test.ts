import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { test } from "node:test";
import { testRedis } from "../store/test-redis.ts";
import { RedisConversationStore } from "./redis-store.ts";
import { conversationStoreCases } from "./store.cases.ts";

conversationStoreCases("redis", async (ttlMs = 60_000) => {
  const r = await testRedis();
  return { store: new RedisConversationStore(r.redis, r.prefix, { ttlMs }), close: r.close, pass: (ms: number) => sleep(ms) };
});

test("redis: both keys of a conversation carry the tenant as hash tag (one Cluster slot)", async () => {
  const r = await testRedis();
  try {
    const store = new RedisConversationStore(r.redis, r.prefix, { ttlMs: 60_000 });
    await store.append("acme {x}", "conv-1", [{ role: "user", content: "hi" }], "cloud");
    const keys = (await r.redis.keys(`${r.prefix}*`)).sort();
    assert.deepEqual(keys, [`${r.prefix}conv:{acme%20%7Bx%7D}:conv-1:h`, `${r.prefix}conv:{acme%20%7Bx%7D}:conv-1:m`]);
    assert.ok((await r.redis.pttl(keys[0] ?? "")) > 59_000);
  } finally {
    await r.close();
  }
});
