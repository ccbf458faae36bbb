/**
 * A pushed routing policy (`applyRoutingPolicy`, what `followControlPlane` runs for each
 * `gearbox.v1.RoutingPolicy`) replaces the config, not the state that outlives it: conversation
 * stickiness, the cloud-latency window and the month's cloud spend stay with the gateway (its
 * `ProcessorDeps`), and two gateways in one process share them only when given the same state.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseConfigText, resolveConfig, type GatewayConfig } from "../config/load.ts";
import { LiveEdgeAgents } from "../edge/agents.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import { RequestProcessor, type ProcessorDeps } from "../processor/processor.ts";
import type { Outcome } from "../processor/outcome.ts";
import { createRoutingState } from "../runtime/routing-state.ts";
import { applyRoutingPolicy } from "./follow.ts";
import { Runtime } from "../runtime/runtime.ts";

/** No rules: the heuristic (complexity threshold 0.7) and its live signals decide. */
const ROUTE = { dynamic: { latency_steps: [] as { p50_above_ms: number; threshold: number }[] } };
const CONFIG = `
providers:
  - { name: openai, kind: openai, base_url: 'https://api.openai.com/v1', api_key_env: K, pricing: { gpt-4o: { input: 2.5, output: 10 } } }
edge:
  agents: [{ address: '10.0.0.7:8088', models: [qwen-small] }]
  default_model: qwen-small
`;

function load(extraRoute = ""): GatewayConfig {
  const raw = parseConfigText(CONFIG + extraRoute, "follow.yaml");
  assert.ok(raw.ok, !raw.ok ? raw.errors.join() : "");
  const config = resolveConfig(raw.value, { K: "sk" }, "follow.yaml");
  assert.ok(config.ok, !config.ok ? config.errors.join() : "");
  return config.value;
}

function sync(outcome: Outcome | Promise<Outcome>): Outcome {
  assert.ok(!(outcome instanceof Promise), "expected a synchronous outcome");
  return outcome;
}

/** Complexity about 0.8: cloud under the base threshold 0.7, edge under a raised 0.95. */
const HARDISH = "Prove that there are infinitely many primes and explain why the proof works.";
const EASY = "Summarize in one line: the meeting moved to Friday.";

/** One chat call, answered 200 (a cloud call with `usage`, an edge one confidently). Returns the upstream and the reason the client saw. */
function call(deps: ProcessorDeps, content: string, headers: Record<string, string> = {}): { upstream?: string; reason?: string } {
  const p = new RequestProcessor(deps);
  p.requestHeaders({ ":method": "POST", ":path": "/v1/chat/completions", "content-type": "application/json", ...headers }, false);
  const out = sync(p.requestBody(Buffer.from(JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content }] }))));
  assert.ok(out.kind === "continue");
  const upstream = out.mutation?.setHeaders?.["x-gearbox-upstream"];
  const cloud = upstream === "openai";
  const head = sync(p.responseHeaders({ ":status": "200", "content-type": "application/json", ...(!cloud && { "x-gearbox-confidence": "0.9" }) }, false));
  const usage = { prompt_tokens: 1000, completion_tokens: 200, total_tokens: 1200 };
  const model = cloud ? "gpt-4o" : "qwen-small";
  const completion = {
    id: "c",
    object: "chat.completion",
    created: 1,
    model,
    choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
    ...(cloud && { usage }),
  };
  const answer = sync(p.responseBody(Buffer.from(JSON.stringify(completion)), true));
  assert.ok(answer.kind === "continue");
  const reason = head.kind === "continue" ? head.mutation?.setHeaders?.["x-gearbox-reason"] : undefined;
  // An edge answer's reason comes with its body, after the cascade's verdict (`edge_confident:…;`).
  return { upstream, reason: (reason ?? answer.mutation?.setHeaders?.["x-gearbox-reason"])?.replace(/^edge_confident:[^;]*;/, "") };
}

function liveDeps(config: GatewayConfig): ProcessorDeps {
  return { runtime: new Runtime(config, { edgeAgents: new LiveEdgeAgents(config.edge.agents) }), logger: silentLogger() };
}

test("a pushed policy keeps conversation stickiness", async () => {
  const deps = liveDeps(load());
  const first = call(deps, HARDISH, { "x-gearbox-conversation-id": "conv-1" });
  assert.equal(first.upstream, "openai", `complex → cloud: ${first.reason}`);
  assert.match(call(deps, EASY, { "x-gearbox-conversation-id": "conv-1" }).reason ?? "", /^sticky:cloud;/, "before the push");

  const before = deps.runtime.current().config;
  assert.equal(await applyRoutingPolicy(deps.runtime, { ...ROUTE, intent_min_confidence: 0.5 }), undefined);
  assert.notEqual(deps.runtime.current().config, before, "the push replaced the config");

  const after = call(deps, EASY, { "x-gearbox-conversation-id": "conv-1" });
  assert.equal(after.upstream, "openai", `the conversation stays on the cloud: ${after.reason}`);
  assert.match(after.reason ?? "", /^sticky:cloud;/);
  // A conversation the gateway has not seen is not sticky: the easy request goes to the edge.
  assert.equal(call(deps, EASY, { "x-gearbox-conversation-id": "conv-2" }).upstream, "edge");
});

test("a pushed policy keeps the cloud-latency window", async () => {
  // Any measured cloud latency (> 0 ms) raises the cloud threshold to 0.95.
  const latency = { dynamic: { latency_steps: [{ p50_above_ms: 0, threshold: 0.95 }] } };
  const deps = liveDeps(load());
  assert.equal(await applyRoutingPolicy(deps.runtime, latency), undefined);
  // Five cloud answers fill the window enough for a median.
  for (let i = 0; i < 5; i++) assert.equal(call(deps, EASY, { "x-gearbox-route": "cloud" }).upstream, "openai");
  assert.match(call(deps, HARDISH).reason ?? "", /^dynamic:latency_p50>0ms;/, "before the push");

  assert.equal(await applyRoutingPolicy(deps.runtime, { ...latency, intent_min_confidence: 0.5 }), undefined);
  const after = call(deps, HARDISH);
  assert.equal(after.upstream, "edge", `the latency window survived the push: ${after.reason}`);
  assert.match(after.reason ?? "", /^dynamic:latency_p50>0ms;complexity=0\.\d+<0\.95$/);
});

test("two gateways in one process keep their own cloud spend unless given the same state", async () => {
  const budget = "route:\n  dynamic:\n    monthly_cloud_budget_usd: 0.01\n    budget_steps: [{ spent_above: 0.6, threshold: 0.95 }]\n";
  const config = load(budget);
  const spent = (deps: ProcessorDeps) => /^dynamic:budget_spent>0\.6;/.test(call(deps, HARDISH).reason ?? "");

  // Two cloud calls of 0.0045 USD each: 90 % of the budget on gateway A.
  const a: ProcessorDeps = { runtime: new Runtime(config), logger: silentLogger() };
  const b: ProcessorDeps = { runtime: new Runtime(config), logger: silentLogger() };
  for (let i = 0; i < 2; i++) call(a, "Write a Python function that parses ISO dates.", { "x-gearbox-route": "cloud" });
  assert.equal(spent(a), true, "A sees its own spend");
  assert.equal(spent(b), false, "B, with the same config, does not see A's spend");

  // The spend survives A's policy pushes too.
  const live = liveDeps(config);
  for (let i = 0; i < 2; i++) call(live, "Write a Python function that parses ISO dates.", { "x-gearbox-route": "cloud" });
  assert.equal(await applyRoutingPolicy(live.runtime, { ...config.route, intent_min_confidence: 0.5 }), undefined);
  assert.equal(spent(live), true, "the spend survived the push");

  // Given one state object, two gateways share it.
  const shared = createRoutingState();
  const c: ProcessorDeps = { runtime: new Runtime(config, { state: shared }), logger: silentLogger() };
  const d: ProcessorDeps = { runtime: new Runtime(config, { state: shared }), logger: silentLogger() };
  for (let i = 0; i < 2; i++) call(c, "Write a Python function that parses ISO dates.", { "x-gearbox-route": "cloud" });
  assert.equal(spent(d), true, "D sees the spend C booked in the shared state");
  assert.ok(shared.cloudSpend.spentUsd() > 0.006);
});
