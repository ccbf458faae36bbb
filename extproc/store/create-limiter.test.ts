import assert from "node:assert/strict";
import { test } from "node:test";
import { silentLogger } from "../../common/telemetry/logger.ts";
import { createLimiterStore } from "./create-limiter.ts";
import { FailoverLimiter } from "./failover-limiter.ts";
import { MemoryLimiter } from "./memory-limiter.ts";

test("without a Redis URL the limits live in memory, with no Redis stats", () => {
  const setup = createLimiterStore({ logger: silentLogger() });
  assert.ok(setup.store instanceof MemoryLimiter);
  assert.equal(setup.stats, undefined);
  setup.close();
});

test("with a Redis URL they are shared on Redis behind the failover, whose stats are exposed", () => {
  const setup = createLimiterStore({ redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379", logger: silentLogger(), prefix: "gbxtest:create:" });
  assert.ok(setup.store instanceof FailoverLimiter);
  assert.deepEqual(setup.stats, { redisHealthy: true, fallbackDecisions: 0, redisErrors: 0 });
  setup.close();
});
