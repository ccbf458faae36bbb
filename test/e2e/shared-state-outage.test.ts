/**
 * Redis failing never fails a request, end to end: the gateway wired as `gearbox serve` wires it
 * with `REDIS_URL` (tenants, keys, limits and the exact cache on a redis-server of this test's
 * own, persisted so a restart keeps the keys), a tenant with a call key and a requests-per-second
 * limit, and steady traffic from the OpenAI SDK through the front door and through the Envoy
 * harness + ext_proc. Redis is stopped (SIGTERM), restarted, frozen (SIGSTOP) and woken, each
 * time for longer than the key and tenant freshness (`shared_state.refresh_ms`), so every store on
 * the request path must answer without it.
 *
 * Checked: no request fails (each is answered 200, or 429 by the limit); the limit holds across
 * every transition (admissions on the limiter's own clock); each store logs one line per
 * transition and counts it; after Redis is back a key revoked on Redis stops working within
 * `refresh_ms`.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import OpenAI from "openai";
import { pino } from "pino";
import { startGovernance, type RunningGovernance } from "../../cli/governance.ts";
import { createResponseCache, type ResponseCacheSetup } from "../../extproc/cache/create-response-cache.ts";
import { generateKey } from "../../extproc/governance/keys.ts";
import type { ProcessorDeps } from "../../extproc/processor/processor.ts";
import { connectRedis, redisReady, type Redis } from "../../extproc/store/redis.ts";
import { RedisTenantStore } from "../../extproc/store/redis-tenant-store.ts";
import { GatewayMetrics } from "../../extproc/telemetry/metrics.ts";
import { startOpenAIUpstream, type OpenAIUpstream } from "../emulators/openai-upstream.ts";
import { RedisChild } from "../support/redis-child.ts";
import { startGatewayPair, testConfig, type GatewayPair } from "../support/gateway.ts";
import { Runtime } from "../../extproc/runtime/runtime.ts";

const PROVIDER_KEY = "sk-provider-outage";
const LIMIT = 10;
const REFRESH_MS = 500;
/** Longer than the freshness: key and tenant reads need Redis during the outage. */
const OUTAGE_MS = 1_500;

let dir: string;
let redis: RedisChild;
let admin: Redis;
let cloud: OpenAIUpstream;
let governed: RunningGovernance;
let cached: ResponseCacheSetup;
let gateway: GatewayPair;
let metrics: GatewayMetrics;
let callKey: string;
let keyId: string;
const logs: { level: number; msg: string; store?: string }[] = [];
/** The limiter's clock at each admission (ms), from the tickets the governor hands out. */
const admittedAt: number[] = [];

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "gearbox-outage-"));
  redis = await RedisChild.start({ persistDir: dir });
  admin = connectRedis(redis.url, { commandTimeoutMs: 5_000, name: "gearbox-test-admin" });
  await redisReady(admin, 5_000);
  cloud = await startOpenAIUpstream({ apiKey: PROVIDER_KEY });
  const config = testConfig(
    `providers:\n  - { name: openai, kind: openai, base_url: '${cloud.baseURL}', api_key_env: K }\n` +
      `tenants:\n  - { id: shop, limits: { requests_per_second: ${LIMIT} } }\n` +
      `runaway: { enable: false }\n` +
      `cache: { exact: { enable: true } }\n` +
      `shared_state: { refresh_ms: ${REFRESH_MS}, read_timeout_ms: 100, probe_interval_ms: 200 }\n`,
    { K: PROVIDER_KEY },
  );
  const { key, record } = generateKey({ role: "call", tenant: "shop", name: "shop app", createdBy: "test" });
  await new RedisTenantStore(admin).putKey(record);
  callKey = key;
  keyId = record.id;
  const logger = pino({ level: "info" }, { write: (line: string) => void logs.push(JSON.parse(line) as { level: number; msg: string; store?: string }) });
  governed = await startGovernance(config, logger, { REDIS_URL: redis.url });
  const governor = governed.governance.governor;
  const admit = governor.admit.bind(governor);
  governor.admit = async (request) => {
    const decision = await admit(request);
    if (decision.ok) admittedAt.push(decision.ticket.admittedAtMs);
    return decision;
  };
  cached = createResponseCache(config, { redisUrl: redis.url, logger, sharedState: governed.sharedState });
  metrics = new GatewayMetrics({ sharedState: governed.sharedState }, { defaultMetrics: false });
  const deps: ProcessorDeps = { runtime: new Runtime(config), logger, governance: governed.governance, ...(cached.cache && { cache: cached.cache }) };
  gateway = await startGatewayPair(deps, cloud.url);
});

after(async () => {
  await gateway.close();
  cached.close();
  await governed.close();
  admin.disconnect();
  await cloud.close();
  await redis.down();
  rmSync(dir, { recursive: true, force: true });
});

interface Outcome {
  status: number;
  code?: string;
}

function client(transport: number, apiKey = callKey): OpenAI {
  const baseURL = transport % 2 === 0 ? `http://127.0.0.1:${gateway.frontDoor.port}/v1` : `${gateway.envoy.url}/v1`;
  return new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 10_000 });
}

async function ask(i: number, apiKey = callKey): Promise<Outcome> {
  // Every fourth request is one of five repeated questions (exact-cache hits once stored).
  const content = i % 4 === 0 ? `repeated question ${(i / 4) % 5}` : `question ${i}`;
  try {
    await client(i, apiKey).chat.completions.create({ model: "gpt-4.1-nano", messages: [{ role: "user", content }], max_tokens: 8, temperature: 0 });
    return { status: 200 };
  } catch (err) {
    const e = err as { status?: number; code?: string };
    return { status: e.status ?? 0, ...(e.code !== undefined && { code: e.code }) };
  }
}

/** Sends a request every 40 ms (25 req/s, both transports in turn) while `during` runs. */
async function traffic(during: () => Promise<void>): Promise<Outcome[]> {
  const sent: Promise<Outcome>[] = [];
  let running = true;
  const loop = (async () => {
    for (let i = 0; running; i++) {
      sent.push(ask(i));
      await sleep(40);
    }
  })();
  try {
    await during();
  } finally {
    running = false;
    await loop;
  }
  return Promise.all(sent);
}

const stats = (store: string) => governed.sharedState.stats().find((s) => s.store === store);

async function healthy(): Promise<void> {
  while (governed.sharedState.stats().some((s) => s.degraded)) await sleep(50);
}

test("Redis stopped, restarted, frozen and woken under steady traffic: no request fails, the limit holds, one log line per transition", async (t) => {
  const outcomes = await traffic(async () => {
    await sleep(1_000);
    await redis.down("SIGTERM");
    await sleep(OUTAGE_MS);
    await redis.up();
    await healthy();
    await sleep(1_000);
    redis.signal("SIGSTOP");
    await sleep(OUTAGE_MS);
    redis.signal("SIGCONT");
    await healthy();
    await sleep(1_000);
  });

  const byStatus = outcomes.reduce<Record<string, number>>(
    (acc, o) => ({ ...acc, [`${o.status}${o.code ? ` ${o.code}` : ""}`]: (acc[`${o.status}${o.code ? ` ${o.code}` : ""}`] ?? 0) + 1 }),
    {},
  );
  t.diagnostic(`${outcomes.length} requests: ${JSON.stringify(byStatus)}; shared state ${JSON.stringify(governed.sharedState.stats())}`);
  const failed = outcomes.filter((o) => o.status !== 200 && !(o.status === 429 && o.code === "rate_limit_requests_per_second"));
  assert.deepEqual(failed, [], "every request answered 200, or 429 by the tenant's limit");
  assert.ok(outcomes.filter((o) => o.status === 200).length >= LIMIT * 4, "requests were served through the outages");

  // The limit across every transition, on the limiter's clock (this replica's: Redis decides with it, not instead of it).
  admittedAt.sort((a, b) => a - b);
  assert.ok(admittedAt.length >= LIMIT * 4);
  for (let i = 0; i + LIMIT < admittedAt.length; i++) {
    const span = (admittedAt[i + LIMIT] ?? 0) - (admittedAt[i] ?? 0);
    assert.ok(span >= 1_000, `${LIMIT + 1} admissions within ${span} ms`);
  }

  // Every store on the request path went degraded and came back, twice, and said so once each time.
  for (const store of ["tenants", "limits", "cache"]) {
    assert.deepEqual({ store, to: stats(store)?.toDegraded, back: stats(store)?.toHealthy }, { store, to: 2, back: 2 });
    const lines = logs.filter((l) => l.store === store && /Redis (failed|answers again)/.test(l.msg)).map((l) => (l.level === 40 ? "degraded" : "healthy"));
    assert.deepEqual(lines, ["degraded", "healthy", "degraded", "healthy"], `${store}: one line per transition`);
  }
  assert.ok((stats("tenants")?.staleReads ?? 0) > 0, "keys and tenants were served from their last good values");
  const scraped = await metrics.registry.metrics();
  assert.match(scraped, /gearbox_shared_state_transitions_total\{store="tenants",to="degraded"\} 2/);
  assert.match(scraped, /gearbox_shared_state_degraded\{store="tenants"\} 0/);
  assert.match(scraped, /gearbox_shared_state_stale_reads_total\{store="tenants"\} [1-9]/);
});

test("after Redis is back, a key revoked on Redis (by another replica) is refused within refresh_ms", async () => {
  await sleep(1_000);
  assert.deepEqual(await ask(1_001), { status: 200 }, "the key works before");
  await new RedisTenantStore(admin).revokeKey(keyId, new Date());
  await sleep(REFRESH_MS + 100);
  // Even i: the front door; odd: Envoy + ext_proc.
  for (const i of [1_002, 1_003]) assert.deepEqual(await ask(i), { status: 401, code: "invalid_api_key" }, `request ${i}`);
});
