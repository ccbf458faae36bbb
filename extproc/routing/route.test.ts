/**
 * The route decision as a pure function: each branch of `decideRoute` over a parsed call, the
 * snapshot and the facts known before it (a cache hit, the policy consulted beforehand, a limit
 * that degrades to the edge). The header table through the whole processor is
 * `route-header.test.ts`; this file pins what the processor cannot show from outside: the
 * tagged route itself, its upgrade target and its fallback chain.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { GatewayError } from "../../common/errors.ts";
import { parseConfigText, resolveConfig, type GatewayConfig } from "../config/load.ts";
import { EdgeAgents, type EdgeDirectory } from "../edge/agents.ts";
import { endpointFor } from "../endpoints/registry.ts";
import { parseBody } from "../processor/request-checks.ts";
import { createRoutingState } from "../runtime/routing-state.ts";
import { createSnapshot } from "../runtime/snapshot.ts";
import { decideRoute, policyConsultation, readClientRoute, type Route, type RouteRequest } from "./route.ts";
import { BRIEF_ROUTE_RULES } from "../../test/support/brief-route.ts";

const CONFIG = `
providers:
  - { name: openai, kind: openai, base_url: 'http://127.0.0.1:9/v1', api_key_env: K, models: [gpt-4o, gpt-4o-mini] }
  - { name: claude, preset: anthropic, base_url: 'http://127.0.0.1:9', api_key_env: K, models: [claude-haiku-4-5] }
edge:
  agents: [{ address: '10.0.0.7:8088', models: [qwen-small] }]
  default_model: qwen-small
  fallback_model: gpt-4o-mini
route:
  allow_client_route: true
${BRIEF_ROUTE_RULES}resilience:
  fallbacks:
    gpt-4o: [claude-haiku-4-5, edge]
`;

function load(yaml = CONFIG): GatewayConfig {
  const raw = parseConfigText(yaml, "route.yaml");
  assert.ok(raw.ok, raw.ok ? "" : raw.errors.join());
  const config = resolveConfig(raw.value, { K: "sk-test" }, "route.yaml");
  assert.ok(config.ok, config.ok ? "" : config.errors.join());
  return config.value;
}

const SUMMARY = "Summarize this in one line: the meeting moved to Friday because the room was booked.";
const CODE = "Write a Python function that parses ISO dates and handles time zones.";
const TOOL = { type: "function", function: { name: "lookup", parameters: { type: "object", properties: {} } } };

function request(
  body: Record<string, unknown>,
  options: { headers?: Record<string, string>; config?: GatewayConfig; agents?: EdgeDirectory; path?: string } = {},
): RouteRequest {
  const path = options.path ?? "/v1/chat/completions";
  const spec = endpointFor(path);
  assert.ok(spec);
  const read = parseBody(spec, Buffer.from(JSON.stringify(body)), 1 << 20);
  assert.ok(read.ok, read.ok ? "" : read.errors.join());
  const config = options.config ?? load();
  const snapshot = createSnapshot(config, options.agents ? { edgeAgents: options.agents } : {});
  const headers = options.headers ?? {};
  return { endpoint: spec.name, parsed: read.value.parsed, headers, snapshot, state: createRoutingState(), client: readClientRoute(headers, snapshot) };
}

const chat = (model: string, content: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: "user", content }], ...extra });

/** The route without the objects it carries (agent set, provider), for comparing. */
function shape(route: Route): Record<string, unknown> {
  switch (route.kind) {
    case "cache":
      return { kind: "cache", reason: route.reason };
    case "reject":
      return { kind: "reject", status: route.error.status, code: route.error.code };
    case "edge":
      return { kind: "edge", agent: route.agent.address, model: route.model, upgradeTo: route.upgradeTo, reason: route.reason };
    case "cloud":
      return {
        kind: "cloud",
        provider: route.provider.name,
        upstreamModel: route.upstreamModel,
        reason: route.reason,
        policy: route.policy?.reason,
        chain: route.chain.map((m) => (m.kind === "edge" ? "edge" : m.model)),
      };
    default:
      return route satisfies never;
  }
}

test("a cache hit is the route, whatever the header says", () => {
  const route = decideRoute(request(chat("gpt-4o", CODE), { headers: { "x-gearbox-route": "nonsense" } }), { cached: "semantic" });
  assert.deepEqual(shape(route), { kind: "cache", reason: "cache:semantic" });
});

test("the policy's low gear: the edge default model, upgradable to edge.fallback_model", () => {
  assert.deepEqual(shape(decideRoute(request(chat("gpt-4o", SUMMARY)))), {
    kind: "edge",
    agent: "10.0.0.7:8088",
    model: "qwen-small",
    upgradeTo: "gpt-4o-mini",
    reason: "rule:1",
  });
});

test("the policy's high gear: the provider, the policy's reason kept apart, the chain with its edge last resort", () => {
  assert.deepEqual(shape(decideRoute(request(chat("gpt-4o", CODE)))), {
    kind: "cloud",
    provider: "openai",
    upstreamModel: "gpt-4o",
    reason: "model_listed:openai",
    policy: "rule:2",
    chain: ["claude-haiku-4-5", "edge"],
  });
});

test("a forced edge is final (no upgrade); with tools, or with no agent, it is refused, never sent to a cloud", () => {
  const forced = { "x-gearbox-route": "edge" };
  assert.deepEqual(shape(decideRoute(request(chat("gpt-4o", CODE), { headers: forced }))), {
    kind: "edge",
    agent: "10.0.0.7:8088",
    model: "qwen-small",
    upgradeTo: undefined,
    reason: "client_hint:edge",
  });
  assert.deepEqual(shape(decideRoute(request(chat("gpt-4o", CODE, { tools: [TOOL] }), { headers: forced }))), {
    kind: "reject",
    status: 400,
    code: "tools_unsupported",
  });
  const none = new EdgeAgents({ agents: [] } as unknown as ConstructorParameters<typeof EdgeAgents>[0]);
  assert.deepEqual(shape(decideRoute(request(chat("gpt-4o", CODE), { headers: forced, agents: none }))), {
    kind: "reject",
    status: 503,
    code: "edge_unavailable",
  });
  // Embeddings never go to an edge agent: a forced edge is refused too.
  const embed = request({ model: "text-embedding-3-small", input: "hi" }, { headers: forced, path: "/v1/embeddings" });
  assert.deepEqual(shape(decideRoute(embed)), { kind: "reject", status: 503, code: "edge_unavailable" });
});

test("a client that keeps the call off the edge loses the edge member of the chain; so does a call with tools", () => {
  const cloud = decideRoute(request(chat("gpt-4o", SUMMARY), { headers: { "x-gearbox-route": "cloud" } }));
  assert.deepEqual(shape(cloud), {
    kind: "cloud",
    provider: "openai",
    upstreamModel: "gpt-4o",
    reason: "client_hint_cloud;model_listed:openai",
    policy: undefined,
    chain: ["claude-haiku-4-5"],
  });
  const tools = decideRoute(request(chat("gpt-4o", CODE, { tools: [TOOL] })));
  assert.equal(tools.kind, "cloud");
  assert.deepEqual(shape(tools).chain, ["claude-haiku-4-5"]);
});

test("an edge the policy picked but no agent takes at pick time becomes the cloud and says so", () => {
  const saturated: EdgeDirectory = { serves: (m) => m === "qwen-small", pick: () => undefined };
  const route = decideRoute(request(chat("gpt-4o", SUMMARY), { agents: saturated }));
  assert.deepEqual(shape(route), {
    kind: "cloud",
    provider: "openai",
    upstreamModel: "gpt-4o",
    reason: "model_listed:openai",
    policy: "edge_unavailable;rule:1",
    chain: ["claude-haiku-4-5", "edge"],
  });
});

test("a limit that degrades to the edge forces it without an upgrade; no edge for the call → the limit's own refusal", () => {
  const limit = new GatewayError(429, "rate_limit_error", "Token budget spent.", { code: "tokens_per_day" });
  assert.deepEqual(shape(decideRoute(request(chat("gpt-4o", CODE)), { degraded: limit })), {
    kind: "edge",
    agent: "10.0.0.7:8088",
    model: "qwen-small",
    upgradeTo: undefined,
    reason: "degraded:tokens_per_day",
  });
  const refused = decideRoute(request(chat("gpt-4o", CODE, { tools: [TOOL] })), { degraded: limit });
  assert.equal(refused.kind, "reject");
  assert.equal(refused.kind === "reject" && refused.error, limit);
});

test("the policy consulted beforehand (plugins, the edge intent layer) is the one the route follows", () => {
  const req = request(chat("gpt-4o", CODE));
  assert.ok(policyConsultation(req), "auto mode, a cloud model, an agent for edge.default_model: the policy is consulted");
  const route = decideRoute(req, { consulted: { target: "edge", reason: "plugin:always-edge", layer: "plugin" } });
  assert.deepEqual(shape(route), { kind: "edge", agent: "10.0.0.7:8088", model: "qwen-small", upgradeTo: "gpt-4o-mini", reason: "plugin:always-edge" });
  // A model an agent serves goes there without the policy; so does nothing in cloud mode.
  assert.equal(policyConsultation(request(chat("qwen-small", CODE))), undefined);
  assert.equal(policyConsultation(request(chat("gpt-4o", CODE), { headers: { "x-gearbox-route": "cloud" } })), undefined);
});

test("an invalid header is refused before anything else but a cache hit", () => {
  assert.deepEqual(shape(decideRoute(request(chat("gpt-4o", CODE), { headers: { "x-gearbox-route": "fast" } }))), {
    kind: "reject",
    status: 400,
    code: "invalid_route_hint",
  });
});
