/**
 * Metrics and the request log end to end: real requests through the Envoy harness + ext_proc
 * (the OpenAI SDK as the client, the REAL edge agent on the generated tiny model, a cloud
 * emulator), then a scrape of the HTTP `/metrics` endpoint. Each kind of request — cloud,
 * streamed cloud, edge, upgraded edge, cache miss then hit, 429, 400, degraded to the edge —
 * moves exactly the series it should, by exactly its amount. The request log has a line per
 * request with its request id, and no prompt text or key anywhere.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import OpenAI from "openai";
import { pino } from "pino";
import { MemoryResponseCache } from "../../extproc/cache/memory-response-cache.ts";
import { createAuthDeps } from "../../extproc/governance/auth.ts";
import { Governor } from "../../extproc/governance/governor.ts";
import { generateKey } from "../../extproc/governance/keys.ts";
import { startExtProcServer, type ExtProcServer } from "../../extproc/grpc/server.ts";
import type { ProcessorDeps } from "../../extproc/processor/processor.ts";
import { MemoryLimiter } from "../../extproc/store/memory-limiter.ts";
import { MemoryTenantStore } from "../../extproc/store/memory-tenant-store.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import { GatewayMetrics } from "../../extproc/telemetry/metrics.ts";
import { startMetricsServer, type MetricsServer } from "../../extproc/telemetry/metrics-server.ts";
import { RequestTelemetry } from "../../extproc/telemetry/request-telemetry.ts";
import { startOpenAIUpstream, type OpenAIUpstream } from "../emulators/openai-upstream.ts";
import { confidenceOn, startTinyEdgeAgent, type TinyEdgeAgent } from "../support/tiny-edge-agent.ts";
import { startEnvoy, type EnvoyHarness } from "../harness/envoy.ts";
import { shippedEdgeRoute, shippedEnvoySettings } from "../support/envoy-settings.ts";
import { testConfig } from "../support/gateway.ts";
import { scrape, type Samples } from "../support/prometheus.ts";
import { Runtime } from "../../extproc/runtime/runtime.ts";

const KEY = "sk-cloud-key-metrics";
const NANO = { input: 0.1, output: 0.4 }; // gpt-4.1-nano list price, USD per 1 M tokens
const usd = (input: number, output: number) => Math.round(((input * NANO.input + output * NANO.output) / 1e6) * 1e6) / 1e6;
/** Every prompt sent carries this, so the logs can be searched for prompt text. */
const SECRET_PROMPT = "PROMPT-TEXT-zebra-4417";

let agent: TinyEdgeAgent;
let cloud: OpenAIUpstream;
let governor: Governor;
let extProc: ExtProcServer;
let envoy: EnvoyHarness;
let metricsServer: MetricsServer;
const logs: Record<string, unknown>[] = [];
const rawLogs: string[] = [];
const keys: Record<string, string> = {};

const EDGE_ASK = { model: "tiny", messages: [{ role: "user" as const, content: `Classify: refund request ${SECRET_PROMPT}` }], max_tokens: 8, temperature: 0 };
const cloudAsk = (n: string) => ({ model: "gpt-4.1-nano", messages: [{ role: "user" as const, content: `${n} ${SECRET_PROMPT}` }], max_tokens: 8 });

before(async () => {
  agent = await startTinyEdgeAgent();
  cloud = await startOpenAIUpstream({ apiKey: KEY });
  const confidence = await confidenceOn(agent, EDGE_ASK);
  const config = testConfig(
    `providers:\n  - { name: openai, kind: openai, base_url: '${cloud.baseURL}', api_key_env: K, models: [gpt-4.1-nano] }\n` +
      `edge:\n  agents: [{ address: '127.0.0.1:${agent.port}', models: [tiny] }]\n  default_model: tiny\n  fallback_model: gpt-4.1-nano\n` +
      // Auto-routed tiny answers are upgraded (threshold above the model's confidence); forced edge answers stay.
      `route:\n  fallback: { enable: true, confidence_threshold: ${Math.min(0.999, confidence + 0.05)} }\n` +
      `tenants:\n  - { id: shop }\n  - { id: tight, limits: { tokens_per_minute: 1 } }\n  - { id: capped, limits: { daily_cost_usd: 0.0000001 }, degrade_to_edge: true }\n` +
      `cache: { exact: { enable: true } }\n`,
    { K: KEY },
  );
  const store = new MemoryTenantStore();
  for (const tenant of ["shop", "tight", "capped"]) {
    const { key, record } = generateKey({ role: "call", tenant, name: `${tenant} app`, createdBy: "test" });
    await store.putKey(record);
    keys[tenant] = key;
  }
  governor = new Governor({ store: new MemoryLimiter(), runaway: config.runaway, logger: silentLogger() });
  const logger = pino(
    { level: "info" },
    {
      write: (line: string) => {
        rawLogs.push(line);
        logs.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  );
  const metrics = new GatewayMetrics({ alerts: governor.alerts });
  const deps: ProcessorDeps = {
    runtime: new Runtime(config),
    logger,
    telemetry: new RequestTelemetry(logger, metrics),
    governance: { auth: createAuthDeps(config, store, {}), governor },
    cache: new MemoryResponseCache(config.cache.exact.max_bytes),
  };
  extProc = await startExtProcServer(deps, 0, "127.0.0.1");
  envoy = await startEnvoy({
    extProc: { ...shippedEnvoySettings().extProc, address: `127.0.0.1:${extProc.port}` },
    routes: [{ header: "x-gearbox-upstream", value: "openai", cluster: "openai" }, shippedEdgeRoute().route],
    clusters: { openai: { url: cloud.url }, edge: shippedEdgeRoute().cluster },
  });
  metricsServer = await startMetricsServer([metrics.registry], 0, "127.0.0.1");
});

after(async () => {
  await envoy.close();
  await extProc.drain(1000);
  await metricsServer.close();
  governor.close();
  await agent.close();
  await cloud.close();
});

const client = (tenant = "shop") => new OpenAI({ baseURL: `${envoy.url}/v1`, apiKey: keys[tenant] ?? "", maxRetries: 0 });
const metricsUrl = () => `http://127.0.0.1:${metricsServer.port}/metrics`;
const REQ = (labels: Record<string, string>) => ({ endpoint: "chat_completions", ...labels });

/** Runs `action`, scraping before and after; returns the change of every series. */
async function deltas(action: () => Promise<unknown>): Promise<Samples> {
  const before = await scrape(metricsUrl());
  await action();
  const afterwards = await scrape(metricsUrl());
  return afterwards.minus(before);
}

async function statusOf(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
    return 200;
  } catch (err) {
    return (err as { status?: number }).status ?? 0;
  }
}

test("a cloud call: request, tokens, cost and latency move by the call's own numbers", async () => {
  let usage: OpenAI.CompletionUsage | undefined;
  const d = await deltas(async () => {
    usage = (await client().chat.completions.create(cloudAsk("cloud one"), { headers: { "x-gearbox-route": "cloud" } })).usage;
  });
  assert.ok(usage);
  assert.equal(d.get("gearbox_requests_total", REQ({ route: "cloud", model: "gpt-4.1-nano", tenant: "shop", status: "200" })), 1);
  assert.equal(d.sum("gearbox_requests_total"), 1, "nothing else counted");
  assert.equal(d.get("gearbox_tokens_total", { type: "input", route: "cloud", model: "gpt-4.1-nano", tenant: "shop" }), usage.prompt_tokens);
  assert.equal(d.get("gearbox_tokens_total", { type: "output", route: "cloud", model: "gpt-4.1-nano", tenant: "shop" }), usage.completion_tokens);
  assert.equal(
    round(d.get("gearbox_cloud_cost_usd_total", { provider: "openai", model: "gpt-4.1-nano", tenant: "shop" })),
    usd(usage.prompt_tokens, usage.completion_tokens),
  );
  assert.equal(d.get("gearbox_request_duration_seconds_count", { endpoint: "chat_completions", route: "cloud" }), 1);
  assert.equal(d.sum("gearbox_time_to_first_token_seconds_count"), 0, "not a stream: no TTFT");
  assert.equal(d.sum("gearbox_cloud_cost_avoided_usd_total"), 0);
});

test("a streamed cloud call observes time to first token", async () => {
  const d = await deltas(async () => {
    const stream = await client().chat.completions.create({ ...cloudAsk("cloud stream"), stream: true }, { headers: { "x-gearbox-route": "cloud" } });
    for await (const _ of stream) void _;
  });
  assert.equal(d.get("gearbox_requests_total", REQ({ route: "cloud", model: "gpt-4.1-nano", tenant: "shop", status: "200" })), 1);
  assert.equal(d.get("gearbox_time_to_first_token_seconds_count", { endpoint: "chat_completions", route: "cloud" }), 1);
  const ttft = d.get("gearbox_time_to_first_token_seconds_sum", { endpoint: "chat_completions", route: "cloud" });
  const total = d.get("gearbox_request_duration_seconds_sum", { endpoint: "chat_completions", route: "cloud" });
  assert.ok(ttft > 0 && ttft <= total, `ttft ${ttft} within the request's ${total}`);
});

test("an edge answer kept: edge share, edge tokens, cloud cost avoided at the fallback model's price", async () => {
  let usage: OpenAI.CompletionUsage | undefined;
  const d = await deltas(async () => {
    const { data, response } = await client()
      .chat.completions.create(EDGE_ASK, { headers: { "x-gearbox-route": "edge" } })
      .withResponse();
    assert.equal(response.headers.get("x-gearbox-route"), "edge");
    usage = data.usage;
  });
  assert.ok(usage);
  assert.equal(d.get("gearbox_requests_total", REQ({ route: "edge", model: "tiny", tenant: "shop", status: "200" })), 1);
  assert.equal(d.get("gearbox_edge_answers_total", { edge_model: "tiny", outcome: "kept" }), 1);
  assert.equal(d.sum("gearbox_upgrades_total"), 0);
  assert.equal(d.get("gearbox_tokens_total", { type: "input", route: "edge", model: "tiny", tenant: "shop" }), usage.prompt_tokens);
  assert.equal(d.get("gearbox_tokens_total", { type: "output", route: "edge", model: "tiny", tenant: "shop" }), usage.completion_tokens);
  assert.equal(round(d.get("gearbox_cloud_cost_avoided_usd_total", { route: "edge", tenant: "shop" })), usd(usage.prompt_tokens, usage.completion_tokens));
  assert.equal(d.sum("gearbox_cloud_cost_usd_total"), 0, "nothing spent on the cloud");
  assert.equal(d.get("gearbox_cache_requests_total", { endpoint: "chat_completions", result: "miss", layer: "none" }), 1, "temperature 0: looked up, missed");
});

test("an edge answer upgraded: counted once as cloud, with the upgrade, its reason and its cost", async () => {
  let usage: OpenAI.CompletionUsage | undefined;
  const d = await deltas(async () => {
    const { data, response } = await client()
      .chat.completions.create({ ...EDGE_ASK, messages: [{ role: "user", content: `Classify: refund request ${SECRET_PROMPT}` }] })
      .withResponse();
    assert.match(response.headers.get("x-gearbox-fallback") ?? "", /^low_confidence:/);
    usage = data.usage;
  });
  assert.ok(usage);
  assert.equal(d.get("gearbox_requests_total", REQ({ route: "cloud", model: "tiny", tenant: "shop", status: "200" })), 1);
  assert.equal(d.sum("gearbox_requests_total"), 1);
  assert.equal(d.get("gearbox_edge_answers_total", { edge_model: "tiny", outcome: "upgraded" }), 1);
  assert.equal(d.get("gearbox_upgrades_total", { reason: "low_confidence", result: "ok" }), 1);
  assert.equal(
    round(d.get("gearbox_cloud_cost_usd_total", { provider: "openai", model: "gpt-4.1-nano", tenant: "shop" })),
    usd(usage.prompt_tokens, usage.completion_tokens),
  );
  assert.equal(d.get("gearbox_tokens_total", { type: "output", route: "cloud", model: "gpt-4.1-nano", tenant: "shop" }), usage.completion_tokens);
  assert.ok(d.get("gearbox_tokens_total", { type: "input", route: "edge", model: "tiny", tenant: "shop" }) > 0, "the edge's tokens count too");
  assert.equal(d.sum("gearbox_cloud_cost_avoided_usd_total"), 0, "an upgraded answer saved nothing");
});

test("a cache miss then a hit: the hit is served by the cache and saves its cloud cost", async () => {
  const ask = { ...cloudAsk("cache me"), temperature: 0 };
  const first = await deltas(() => client().chat.completions.create(ask, { headers: { "x-gearbox-route": "cloud" } }));
  assert.equal(first.get("gearbox_cache_requests_total", { endpoint: "chat_completions", result: "miss", layer: "none" }), 1);
  assert.equal(first.get("gearbox_requests_total", REQ({ route: "cloud", model: "gpt-4.1-nano", tenant: "shop", status: "200" })), 1);
  let usage: OpenAI.CompletionUsage | undefined;
  const seen = cloud.requests.length;
  const second = await deltas(async () => {
    const { data, response } = await client()
      .chat.completions.create(ask, { headers: { "x-gearbox-route": "cloud" } })
      .withResponse();
    assert.equal(response.headers.get("x-gearbox-route"), "cache");
    usage = data.usage;
  });
  assert.equal(cloud.requests.length, seen);
  assert.ok(usage);
  assert.equal(second.get("gearbox_cache_requests_total", { endpoint: "chat_completions", result: "hit", layer: "exact" }), 1);
  assert.equal(second.get("gearbox_requests_total", REQ({ route: "cache", model: "gpt-4.1-nano", tenant: "shop", status: "200" })), 1);
  assert.equal(
    round(second.get("gearbox_cloud_cost_avoided_usd_total", { route: "cache", tenant: "shop" })),
    usd(usage.prompt_tokens, usage.completion_tokens),
  );
  assert.equal(second.sum("gearbox_tokens_total"), 0, "no model ran");
  assert.equal(second.sum("gearbox_cloud_cost_usd_total"), 0);
});

test("a 429 from a limit counts as rate limited with the limit's name; a 400 as an error with no route", async () => {
  const limited = await deltas(async () =>
    assert.equal(await statusOf(client("tight").chat.completions.create(cloudAsk("too many"), { headers: { "x-gearbox-route": "cloud" } })), 429),
  );
  assert.equal(limited.get("gearbox_rate_limited_total", { tenant: "tight", limit: "rate_limit_tokens_per_minute" }), 1);
  assert.equal(limited.get("gearbox_requests_total", REQ({ route: "none", model: "gpt-4.1-nano", tenant: "tight", status: "429" })), 1);
  assert.equal(limited.sum("gearbox_requests_total"), 1);
  const bad = await deltas(async () => {
    const res = await fetch(`${envoy.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${keys.shop ?? ""}` },
      body: JSON.stringify({ model: "gpt-4.1-nano" }),
    });
    assert.equal(res.status, 400);
  });
  assert.equal(bad.get("gearbox_requests_total", REQ({ route: "none", model: "none", tenant: "shop", status: "400" })), 1);
  assert.equal(bad.sum("gearbox_rate_limited_total"), 0);
});

test("a cost-capped tenant with degrade_to_edge: served by the edge, counted as degraded by the cap", async () => {
  const d = await deltas(async () => {
    const { response } = await client("capped")
      .chat.completions.create({ ...cloudAsk("degrade me"), temperature: 0 }, { headers: { "x-gearbox-route": "cloud" } })
      .withResponse();
    assert.equal(response.headers.get("x-gearbox-route"), "edge");
  });
  assert.equal(d.get("gearbox_degraded_total", { tenant: "capped", limit: "daily_cost_cap" }), 1);
  assert.equal(d.get("gearbox_requests_total", REQ({ route: "edge", model: "gpt-4.1-nano", tenant: "capped", status: "200" })), 1);
  assert.equal(d.sum("gearbox_rate_limited_total"), 0, "degraded, not refused");
});

test("an unknown model name is labelled 'other': clients cannot grow the label set", async () => {
  const d = await deltas(async () =>
    assert.equal(
      await statusOf(client().chat.completions.create({ ...cloudAsk("odd"), model: "made-up-model-8123" }, { headers: { "x-gearbox-route": "cloud" } })),
      200,
    ),
  );
  assert.equal(d.get("gearbox_requests_total", REQ({ route: "cloud", model: "other", tenant: "shop", status: "200" })), 1);
  const text = await (await fetch(metricsUrl())).text();
  assert.ok(!text.includes("made-up-model-8123"));
  assert.ok(!text.includes(SECRET_PROMPT));
});

test("the request log: one line per request with its request id; no prompt text, no key, anywhere", async () => {
  const mark = logs.length;
  const { response } = await client()
    .chat.completions.create(cloudAsk("logged"), { headers: { "x-gearbox-route": "cloud" } })
    .withResponse();
  const lines = logs.slice(mark).filter((l) => l.msg === "request");
  assert.equal(lines.length, 1);
  const line = lines[0] ?? {};
  assert.equal(line.request_id, response.headers.get("x-gearbox-request-id"));
  assert.equal(line.transport, "ext_proc");
  assert.equal(line.route, "cloud");
  assert.equal(line.tenant, "shop");
  assert.equal(typeof line.duration_ms, "number");
  if (line.trace_id !== undefined) assert.match(typeof line.trace_id === "string" ? line.trace_id : "", /^[0-9a-f]{32}$/);
  const all = rawLogs.join("\n");
  assert.ok(rawLogs.length >= 10, `${rawLogs.length} lines written`);
  assert.ok(!all.includes(SECRET_PROMPT), "no prompt text in any log line");
  assert.ok(!all.includes("Classify: refund"), "no prompt text in any log line");
  assert.ok(!all.includes(KEY), "no provider key");
  for (const key of Object.values(keys)) assert.ok(!all.includes(key), "no call key");
});

const round = (n: number) => Math.round(n * 1e6) / 1e6;
