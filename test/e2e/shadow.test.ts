/**
 * Shadow mode end to end, through the Envoy harness: Gearbox decides on each request (edge, a
 * cache hit, a 429, a 400) but the request reaches the provider exactly as the client sent it —
 * same path, same bytes, the client's own authorization — and the client gets the provider's
 * answer unchanged. What Gearbox would have done is in the request log (`shadow_*`) and in
 * `gearbox_shadow_decisions_total`. Two ways in: the normal blocking ext_proc config with
 * `shadow: { enable: true }`, and Envoy's `observability_mode` (envoy/shadow-observability.yaml,
 * send and go, STREAMED request body) with no shadow config at all.
 */
import assert from "node:assert/strict";
import type http from "node:http";
import { after, before, describe, test } from "node:test";
import { pino } from "pino";
import { MemoryResponseCache } from "../../extproc/cache/memory-response-cache.ts";
import type { GatewayConfig } from "../../extproc/config/load.ts";
import { createAuthDeps } from "../../extproc/governance/auth.ts";
import { Governor } from "../../extproc/governance/governor.ts";
import { generateKey } from "../../extproc/governance/keys.ts";
import { startExtProcServer, type ExtProcServer } from "../../extproc/grpc/server.ts";
import { startFrontDoor, type FrontDoor } from "../../extproc/http/front-door.ts";
import type { ProcessorDeps } from "../../extproc/processor/processor.ts";
import { MemoryLimiter } from "../../extproc/store/memory-limiter.ts";
import { MemoryTenantStore } from "../../extproc/store/memory-tenant-store.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import { GatewayMetrics } from "../../extproc/telemetry/metrics.ts";
import { RequestTelemetry } from "../../extproc/telemetry/request-telemetry.ts";
import { startEnvoy, type EnvoyHarness } from "../harness/envoy.ts";
import { startUpstream, type RecordedRequest, type TestUpstream } from "../harness/test-http.ts";
import { shippedEnvoySettings } from "../support/envoy-settings.ts";
import { testConfig } from "../support/gateway.ts";
import { Samples } from "../support/prometheus.ts";
import { Runtime } from "../../extproc/runtime/runtime.ts";

/** What the provider answers every request with, byte for byte. */
const ANSWER = Buffer.from(
  JSON.stringify({
    id: "chatcmpl-shadow",
    object: "chat.completion",
    created: 1,
    model: "gpt-4.1-nano",
    choices: [{ index: 0, message: { role: "assistant", content: "from the provider" }, finish_reason: "stop" }],
    usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
  }),
);

let provider: TestUpstream;
/** Where Gearbox's own routing would send a call: nothing may arrive here in shadow mode. */
let routed: TestUpstream;
let governor: Governor;
let metrics: GatewayMetrics;
let frontDoor: FrontDoor;
const servers: ExtProcServer[] = [];
const envoys: Record<string, EnvoyHarness> = {};
const logs: Record<string, unknown>[] = [];
const keys: Record<string, string> = {};

function config(shadow: boolean): GatewayConfig {
  return testConfig(
    `providers:\n  - { name: openai, kind: openai, base_url: '${provider.url}/v1', api_key_env: K, models: [gpt-4.1-nano] }\n` +
      // No edge agent listens there: in shadow mode none is called.
      `edge:\n  agents: [{ address: '127.0.0.1:9', models: [tiny] }]\n` +
      `tenants:\n  - { id: shop }\n  - { id: tight, limits: { tokens_per_minute: 1 } }\n` +
      `cache: { exact: { enable: true } }\n` +
      (shadow ? "shadow: { enable: true }\n" : ""),
    { K: "sk-gearbox-provider-key" },
  );
}

before(async () => {
  provider = await startUpstream("provider", (_req: RecordedRequest, res: http.ServerResponse) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": String(ANSWER.length), "x-upstream": "provider" });
    res.end(ANSWER);
  });
  routed = await startUpstream("routed");
  const store = new MemoryTenantStore();
  for (const tenant of ["shop", "tight"]) {
    const { key, record } = generateKey({ role: "call", tenant, name: `${tenant} app`, createdBy: "test" });
    await store.putKey(record);
    keys[tenant] = key;
  }
  governor = new Governor({ store: new MemoryLimiter(), runaway: config(true).runaway, logger: silentLogger() });
  const logger = pino({ level: "info" }, { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
  metrics = new GatewayMetrics({}, { defaultMetrics: false });
  const cache = new MemoryResponseCache(64 * 1024 * 1024);
  const depsFor = (shadow: boolean): ProcessorDeps => {
    const c = config(shadow);
    return {
      runtime: new Runtime(c),
      logger,
      telemetry: new RequestTelemetry(logger, metrics),
      governance: { auth: createAuthDeps(c, store, {}), governor },
      cache,
    };
  };
  const blocking = depsFor(true);
  // The front door is never shadowed: it fills the cache the shadowed requests would hit.
  frontDoor = await startFrontDoor(blocking, 0, "127.0.0.1");
  for (const [name, deps, settings] of [
    ["shadow config", blocking, shippedEnvoySettings("local-dev.yaml")],
    ["observability mode", depsFor(false), shippedEnvoySettings("shadow-observability.yaml")],
  ] as const) {
    const server = await startExtProcServer(deps, 0, "127.0.0.1");
    servers.push(server);
    envoys[name] = await startEnvoy({
      extProc: { ...settings.extProc, address: `127.0.0.1:${server.port}` },
      routes: [{ header: "x-gearbox-upstream", value: "openai", cluster: "routed" }],
      defaultCluster: "provider",
      clusters: { provider: { url: provider.url }, routed: { url: routed.url } },
    });
  }
});

after(async () => {
  for (const envoy of Object.values(envoys)) await envoy.close();
  for (const server of servers) await server.drain(1000);
  await frontDoor.close();
  governor.close();
  await provider.close();
  await routed.close();
});

async function shadowSamples(): Promise<Samples> {
  return Samples.parse(await metrics.registry.metrics());
}

/** The request log line of `requestId` (observability mode records after the answer: wait for it). */
async function logLine(requestId: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 200; i++) {
    const line = logs.find((l) => l.msg === "request" && l.request_id === requestId);
    if (line) return line;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no request log line for ${requestId}`);
}

test("the observability config is what the harness runs: send and go, STREAMED request body", () => {
  const { extProc } = shippedEnvoySettings("shadow-observability.yaml");
  assert.equal(extProc.observabilityMode, true);
  assert.equal(extProc.processingMode?.request_body_mode, "STREAMED");
});

for (const transport of ["shadow config", "observability mode"] as const) {
  describe(`shadow via ${transport}`, () => {
    let n = 0;
    /** Sends `body` as the client would; checks nothing changed on either side; returns the log line and metric change. */
    async function passThrough(
      tenant: string,
      body: string,
      extraHeaders: Record<string, string> = {},
    ): Promise<{ line: Record<string, unknown>; delta: Samples }> {
      const envoy = envoys[transport];
      assert.ok(envoy);
      const requestId = `shadow-${transport.replace(/ /g, "-")}-${++n}`;
      const before = await shadowSamples();
      const seen = provider.requests.length;
      const headers = {
        "content-type": "application/json",
        authorization: `Bearer ${keys[tenant] ?? ""}`,
        "x-request-id": requestId,
        "x-client-marker": "kept",
        ...extraHeaders,
      };
      const res = await fetch(`${envoy.url}/v1/chat/completions?api-version=1`, { method: "POST", headers, body });
      const bytes = Buffer.from(await res.arrayBuffer());
      assert.equal(res.status, 200, "the provider's status, not Gearbox's");
      assert.deepEqual(bytes, ANSWER, "the provider's answer, byte for byte");
      assert.equal(res.headers.get("x-upstream"), "provider");
      for (const name of ["x-gearbox-route", "x-gearbox-reason", "x-gearbox-request-id", "x-gearbox-cache", "x-ratelimit-limit-requests"])
        assert.equal(res.headers.get(name), null, `${name} added`);
      assert.equal(provider.requests.length, seen + 1);
      assert.equal(routed.requests.length, 0, "nothing went where Gearbox would route");
      const got = provider.requests[seen];
      assert.ok(got);
      assert.equal(got.url, "/v1/chat/completions?api-version=1");
      assert.equal(got.body.toString("utf8"), body, "the client's bytes");
      assert.equal(got.headers.authorization, headers.authorization, "the client's own credentials, not Gearbox's");
      assert.equal(got.headers["x-client-marker"], "kept");
      for (const [name, value] of Object.entries(extraHeaders)) assert.equal(got.headers[name], value);
      assert.deepEqual(
        Object.keys(got.headers).filter((h) => h.startsWith("x-gearbox-") && !(h in extraHeaders)),
        [],
        "no Gearbox header added",
      );
      const line = await logLine(requestId);
      return { line, delta: (await shadowSamples()).minus(before) };
    }
    const decision = (labels: Record<string, string>) => ({
      endpoint: "chat_completions",
      tenant: "shop",
      would_cache: "none",
      would_status: "200",
      would_error: "none",
      ...labels,
    });

    test("would go to the edge: recorded, yet the provider answers", async () => {
      const { line, delta } = await passThrough("shop", JSON.stringify({ model: "tiny", messages: [{ role: "user", content: "Classify: refund" }] }));
      assert.equal(line.shadow, true);
      assert.equal(line.shadow_route, "edge");
      assert.equal(line.shadow_reason, "edge_model");
      assert.equal(line.route, undefined, "not counted as served");
      assert.equal(delta.get("gearbox_shadow_decisions_total", decision({ would_route: "edge" })), 1);
      assert.equal(delta.sum("gearbox_requests_total"), 0, "shadowed requests stay out of the traffic series");
    });

    test("would be a cache hit: recorded, yet the provider answers", async () => {
      const ask = { model: "gpt-4.1-nano", messages: [{ role: "user", content: `cached for ${transport}` }], temperature: 0 };
      const fill = await fetch(`http://127.0.0.1:${frontDoor.port}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${keys.shop ?? ""}` },
        body: JSON.stringify(ask),
      });
      assert.equal(fill.status, 200);
      await fill.arrayBuffer();
      const { line, delta } = await passThrough("shop", JSON.stringify(ask), { "x-gearbox-route": "cloud" });
      assert.equal(line.shadow_route, "cache");
      assert.equal(line.shadow_cache, "hit");
      assert.equal(delta.get("gearbox_shadow_decisions_total", decision({ would_route: "cache", would_cache: "hit" })), 1);
    });

    test("would be refused (429, 400): recorded with the limit, yet the provider answers", async () => {
      const limited = await passThrough("tight", JSON.stringify({ model: "gpt-4.1-nano", messages: [{ role: "user", content: "over the limit" }] }));
      assert.equal(limited.line.shadow_route, "reject");
      assert.equal(limited.line.shadow_status, 429);
      assert.equal(limited.line.shadow_error_code, "rate_limit_tokens_per_minute");
      assert.equal(
        limited.delta.get(
          "gearbox_shadow_decisions_total",
          decision({ tenant: "tight", would_route: "reject", would_status: "429", would_error: "rate_limit_tokens_per_minute" }),
        ),
        1,
      );
      const invalid = await passThrough("shop", '{"model": "gpt-4.1-nano", "messages": [');
      assert.equal(invalid.line.shadow_status, 400);
      assert.equal(invalid.line.shadow_error_code, "invalid_json");
      assert.equal(
        invalid.delta.get("gearbox_shadow_decisions_total", decision({ would_route: "reject", would_status: "400", would_error: "invalid_json" })),
        1,
      );
    });
  });
}
