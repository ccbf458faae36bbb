/** Which semantic store a configuration gets: none, memory, or Redis. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { semanticCacheSchema } from "../../config/schema.ts";
import { testRedis } from "../../store/test-redis.ts";
import { silentLogger } from "../../../common/telemetry/logger.ts";
import { createSemanticStore } from "./create-semantic-store.ts";
import { MemorySemanticStore } from "./memory-semantic-store.ts";
import { RedisSemanticStore } from "./redis-semantic-store.ts";

const logger = silentLogger();

test("create-semantic-store: off → no store; on → memory; with Redis → the Redis store", async () => {
  const off = createSemanticStore(semanticCacheSchema.parse({}), { dimensions: 8, logger });
  assert.equal(off.store, undefined);
  await off.close();

  const memory = createSemanticStore(semanticCacheSchema.parse({ enable: true }), { dimensions: 8, logger });
  assert.ok(memory.store instanceof MemorySemanticStore);
  assert.match(memory.describe, /in memory/);
  await memory.close();

  const r = await testRedis();
  try {
    const shared = createSemanticStore(semanticCacheSchema.parse({ enable: true }), { dimensions: 8, logger, redis: r.redis });
    assert.ok(shared.store instanceof RedisSemanticStore);
    assert.match(shared.describe, /on Redis/);
    await shared.close();
    assert.equal(r.redis.status, "ready", "a client passed in stays open");
  } finally {
    await r.close();
  }
});
