import assert from "node:assert/strict";
import { test } from "node:test";
import { auditLogCases } from "./audit-log.cases.ts";
import { RedisAuditLog } from "./redis-audit-log.ts";
import { testRedis } from "./test-redis.ts";

auditLogCases("redis", async () => {
  const r = await testRedis();
  return { log: new RedisAuditLog(r.redis, r.prefix), close: r.close };
});

test("redis: entries are a Redis Stream the API only ever appends to (no MAXLEN, no trimming)", async () => {
  const r = await testRedis();
  try {
    const log = new RedisAuditLog(r.redis, r.prefix);
    const stream = `${r.prefix}audit`;
    for (let n = 0; n < 1200; n++)
      await log.append({ at: new Date().toISOString(), actor: "a", action: "tenants.put", target: `t${n}`, from: "::1", result: "ok" });
    assert.equal(await r.redis.type(stream), "stream");
    assert.equal(await r.redis.xlen(stream), 1200);
    const [first] = await r.redis.xrange(stream, "-", "+", "COUNT", 1);
    assert.equal((JSON.parse(first?.[1][1] ?? "{}") as { target?: string }).target, "t0", "the oldest entry is still there");
  } finally {
    await r.close();
  }
});
