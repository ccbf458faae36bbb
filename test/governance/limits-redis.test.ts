/**
 * Limits shared by several Gearbox instances through a real Redis: each Governor has its own
 * ioredis connection, as separate replicas would. The failover test runs its own `redis-server`
 * (a child process it stops, freezes and restarts); the rest use `REDIS_URL` (default the local
 * server) under a key prefix of this file's own.
 *
 * Nothing here asserts on time. Rates are measured on the Redis clock: each admission carries
 * the server time of its script, and admissions are counted per full one-second window.
 */
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { Governor, type AdmitRequest } from "../../extproc/governance/governor.ts";
import { estimateCall } from "../../extproc/governance/limits.ts";
import type { Caller, Limits } from "../../extproc/governance/model.ts";
import { requestFingerprint } from "../../extproc/governance/runaway.ts";
import { FailoverLimiter } from "../../extproc/store/failover-limiter.ts";
import { MemoryLimiter } from "../../extproc/store/memory-limiter.ts";
import { connectRedis, redisReady, type Redis } from "../../extproc/store/redis.ts";
import { RedisLimiter } from "../../extproc/store/redis-limiter.ts";
import { testRedis, type TestRedis } from "../../extproc/store/test-redis.ts";
import { RedisChild } from "../support/redis-child.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";

const RUNAWAY = { enable: true, window_ms: 10_000, max_identical: 3 };
const URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const PRICE = { input: 2, output: 8 };

const caller = (tenant: string, limits: Limits): Caller => ({ tenant: { id: tenant, limits, degrade_to_edge: false, source: "config" }, via: "principal" });

/** Three Gearbox instances: three connections, three Governors, one Redis. */
let shared: TestRedis;
let connections: Redis[] = [];
let governors: Governor[] = [];

before(async () => {
  shared = await testRedis();
  // The semantics are under test here, not Redis latency on a loaded machine: a generous timeout.
  const extra = [connectRedis(URL, { commandTimeoutMs: 5_000 }), connectRedis(URL, { commandTimeoutMs: 5_000 })];
  await Promise.all(extra.map((c) => redisReady(c, 5_000)));
  connections = [shared.redis, ...extra];
  governors = connections.map((c) => new Governor({ store: new RedisLimiter(c, { prefix: shared.prefix }), runaway: RUNAWAY, logger: silentLogger() }));
});

after(async () => {
  for (const g of governors) g.close();
  for (const c of connections.slice(1)) await c.quit();
  await shared.close();
});

/** The i-th request's instance, round-robin. */
function instance(i: number): Governor {
  const governor = governors[i % governors.length];
  assert.ok(governor);
  return governor;
}

async function redisNowMs(redis: Redis): Promise<number> {
  const [s, us] = await redis.time();
  return Number(s) * 1000 + Number(us) / 1000;
}

test("three instances share 100 req/s under 1,000 req/s offered: 100 per full window, within 1 %", async (t) => {
  const request: AdmitRequest = {
    caller: caller("rate", { requests_per_second: 100 }),
    model: "m",
    estimate: { inputTokens: 1, maxOutputTokens: 1, costUsd: 0 },
    target: "cloud",
  };
  const admittedAt: number[] = [];
  const decisions: Promise<void>[] = [];
  let offered = 0;
  const start = performance.now();
  let endMs = 0;
  for (;;) {
    const elapsed = performance.now() - start;
    // 1 request per ms, round-robin over the instances, caught up after any pause of this loop.
    while (offered < elapsed)
      decisions.push(Promise.resolve(instance(offered++).admit(request)).then((d) => void (d.ok && admittedAt.push(d.ticket.admittedAtMs))));
    if (elapsed >= 3_300) {
      // The Redis clock while requests are still being offered: windows ending before it were full.
      endMs = await redisNowMs(shared.redis);
      break;
    }
    await sleep(2);
  }
  await Promise.all(decisions);
  admittedAt.sort((a, b) => a - b);
  const t0 = admittedAt[0] ?? 0;
  const perWindow: number[] = [];
  for (let k = 0; t0 + (k + 1) * 1000 <= endMs; k++) perWindow.push(admittedAt.filter((at) => at >= t0 + k * 1000 && at < t0 + (k + 1) * 1000).length);
  t.diagnostic(`offered ${offered}, admitted ${admittedAt.length}, per full window ${perWindow.join(", ")}`);
  assert.ok(perWindow.length >= 3, `full windows: ${perWindow.length}`);
  const total = perWindow.reduce((a, b) => a + b, 0);
  assert.ok(Math.abs(total - 100 * perWindow.length) <= perWindow.length, `${total} admitted in ${perWindow.length} windows`);
  // Stronger: no sliding second anywhere holds more than 100 admissions.
  for (let i = 0; i + 100 < admittedAt.length; i++) {
    assert.ok((admittedAt[i + 100] ?? 0) - (admittedAt[i] ?? 0) >= 999.999, `101 admissions within ${(admittedAt[i + 100] ?? 0) - (admittedAt[i] ?? 0)} ms`);
  }
});

test("50 concurrent first requests against a daily budget of one request's estimate: exactly one admitted", async () => {
  const estimate = estimateCall(1_200, 512, PRICE);
  const who = caller("budget", { daily_cost_usd: estimate.costUsd });
  const decisions = await Promise.all(
    Array.from({ length: 50 }, (_, i) => Promise.resolve(instance(i).admit({ caller: who, model: "gpt-4.1", estimate, target: "cloud" }))),
  );
  assert.equal(decisions.filter((d) => d.ok).length, 1);
  for (const d of decisions) if (!d.ok) assert.equal(d.error.code, "daily_cost_cap");
});

test("tokens per minute across instances: 60 concurrent reservations of 100 against 1,000 admit exactly 10", async () => {
  const who = caller("tpm", { tokens_per_minute: 1_000 });
  const estimate = { inputTokens: 60, maxOutputTokens: 40, costUsd: 0 };
  const decisions = await Promise.all(
    Array.from({ length: 60 }, (_, i) => Promise.resolve(instance(i).admit({ caller: who, model: "m", estimate, target: "cloud" }))),
  );
  assert.equal(decisions.filter((d) => d.ok).length, 10);
});

test("runaway: 30,000 identical requests reach the upstream at most 30 times, and cost ≈ 0", async (t) => {
  const body = JSON.stringify({ model: "gpt-4.1", messages: [{ role: "user", content: "Summarize the incident report." }] });
  const who = caller("loop", { daily_cost_usd: 1_000 });
  const estimate = estimateCall(20, 512, PRICE);
  const request: AdmitRequest = { caller: who, model: "gpt-4.1", estimate, fingerprint: requestFingerprint("loop", body), target: "cloud" };
  const callCost = 0.01;
  let upstreamCalls = 0;
  let refused = 0;
  const started = performance.now();
  for (let batch = 0; batch < 100; batch++) {
    const decisions = await Promise.all(Array.from({ length: 300 }, (_, i) => Promise.resolve(instance(i).admit(request))));
    for (const d of decisions) {
      if (d.ok) {
        upstreamCalls++;
        await d.ticket.settle({ inputTokens: 20, outputTokens: 100, costUsd: callCost });
      } else if (d.error.code === "runaway_request_loop") refused++;
    }
  }
  const recordedUsd = Number(await shared.redis.hget(`${shared.prefix}{t:loop}:usd`, "used")) / 1e9;
  t.diagnostic(
    `30,000 requests in ${((performance.now() - started) / 1000).toFixed(1)} s: ${upstreamCalls} upstream, ${refused} refused, $${recordedUsd} recorded`,
  );
  assert.ok(upstreamCalls >= 1 && upstreamCalls <= 30, `${upstreamCalls} upstream calls`);
  assert.equal(upstreamCalls + refused, 30_000);
  assert.ok(Math.abs(recordedUsd - upstreamCalls * callCost) < 1e-6 && recordedUsd <= 30 * callCost, `$${recordedUsd} recorded`);
});

test("failover: Redis stopped, frozen and restarted; every request is still decided, local limits hold meanwhile", async (t) => {
  const server = await RedisChild.start();
  const lines: { level: number; msg: string }[] = [];
  const logger = pino(
    { level: "info" },
    new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string }), done()) }),
  );
  // Production options: 50 ms per command, no offline queue, no retries.
  const client = connectRedis(`redis://127.0.0.1:${server.port}`);
  await redisReady(client);
  const store = new FailoverLimiter(new RedisLimiter(client), new MemoryLimiter(), logger, 200);
  const governor = new Governor({ store, runaway: RUNAWAY, logger });
  const request: AdmitRequest = {
    caller: caller("fo", { requests_per_second: 10_000 }),
    model: "m",
    estimate: { inputTokens: 1, maxOutputTokens: 1, costUsd: 0 },
    target: "cloud",
  };
  const capped: AdmitRequest = { ...request, caller: caller("fo-cap", { max_concurrent: 2 }) };

  // Requests keep arriving through every transition; none may fail.
  let decided = 0;
  let failed = 0;
  let running = true;
  const traffic = (async () => {
    while (running) {
      await Promise.resolve(governor.admit(request)).then(
        (d) => void (d.ok && decided++),
        () => failed++,
      );
      await sleep(5);
    }
  })();
  const healthy = async (want: boolean) => {
    while (store.stats.redisHealthy !== want) await sleep(20);
  };
  try {
    await sleep(100);
    assert.equal(store.stats.fallbackDecisions, 0);

    await server.down();
    await healthy(false);
    const local = await Promise.all([governor.admit(capped), governor.admit(capped), governor.admit(capped)]);
    assert.deepEqual(
      local.map((d) => d.ok),
      [true, true, false],
      "the local store enforces the limit during the outage",
    );
    const duringOutage = store.stats.fallbackDecisions;
    await sleep(300);
    assert.ok(store.stats.fallbackDecisions > duringOutage, "decisions go on locally");

    await server.up();
    await healthy(true);
    const fallbackAfter = store.stats.fallbackDecisions;
    await sleep(200);
    assert.equal(store.stats.fallbackDecisions, fallbackAfter, "back on Redis");
    assert.ok((await client.keys("gearbox:{t:fo}:*")).length > 0, "the restarted Redis holds the limits again");

    // Frozen, not gone: the socket stays open and commands hang until their 50 ms timeout.
    server.signal("SIGSTOP");
    const frozen = await Promise.all(Array.from({ length: 10 }, () => Promise.resolve(governor.admit(request))));
    assert.ok(frozen.every((d) => d.ok));
    assert.equal(store.stats.redisHealthy, false);
    server.signal("SIGCONT");
    await healthy(true);
  } finally {
    running = false;
    await traffic;
    governor.close();
    store.close();
    client.disconnect();
    await server.down();
  }
  t.diagnostic(`decided ${decided}, stats ${JSON.stringify(store.stats)}`);
  assert.equal(failed, 0);
  assert.ok(store.stats.redisErrors >= 2);
  const transitions = lines.filter((l) => /limits: Redis/.test(l.msg)).map((l) => (l.level === 40 ? "down" : "up"));
  assert.deepEqual(transitions, ["down", "up", "down", "up"]);
});
