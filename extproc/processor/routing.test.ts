import assert from "node:assert/strict";
import { test } from "node:test";
import { parseConfigText, resolveConfig } from "../config/load.ts";
import { silentLogger } from "../telemetry/logger.ts";
import { createPlugin } from "../routing/policy/index.ts";
import { RequestProcessor } from "./processor.ts";
import type { Outcome } from "./outcome.ts";

/** Phases without plugins or a cloud upgrade answer synchronously. */
function sync(outcome: Outcome | Promise<Outcome>): Outcome {
  assert.ok(!(outcome instanceof Promise), "expected a synchronous outcome");
  return outcome;
}

/** The brief's route block verbatim, an edge agent, and a cloud provider. */
const CONFIG = `
providers:
  - { name: openai, kind: openai, base_url: 'https://api.openai.com/v1', api_key_env: K }
edge:
  agents: [{ address: '10.0.0.7:8088', models: [qwen-small] }]
  default_model: qwen-small
route:
  rules:
    - when:
        intent: [summarize, intent_classify, extract_entity]
        estimated_complexity: low
      target: edge
    - when:
        intent: [code_gen, multi_hop_reasoning, math]
      target: cloud
  fallback:
    enable: true
    confidence_threshold: 0.6
    upgrade_target: cloud
`;

function route(content: string, headers: Record<string, string> = {}, extra: Record<string, unknown> = {}) {
  const raw = parseConfigText(CONFIG, "brief.yaml");
  assert.ok(raw.ok, !raw.ok ? raw.errors.join() : "");
  const config = resolveConfig(raw.value, { K: "sk" }, "brief.yaml");
  assert.ok(config.ok);
  const p = new RequestProcessor({ config: config.value, logger: silentLogger() });
  p.requestHeaders({ ":method": "POST", ":path": "/v1/chat/completions", "content-type": "application/json", ...headers }, false);
  const outcome = sync(p.requestBody(Buffer.from(JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content }], ...extra }))));
  assert.equal(outcome.kind, "continue");
  return outcome.kind === "continue" ? (outcome.mutation?.setHeaders ?? {}) : {};
}

test("the brief's config: a short summary goes to the edge agent", () => {
  const h = route("Summarize this in one line: the meeting moved to Friday because the room was booked.");
  assert.equal(h["x-gearbox-upstream"], "edge");
  assert.equal(h["x-gearbox-edge-endpoint"], "10.0.0.7:8088");
});

test("the brief's config: code generation and math go to the cloud", () => {
  assert.equal(route("Write a Python function that parses ISO dates and handles time zones.")["x-gearbox-upstream"], "openai");
  assert.equal(route("Solve for x: 3x^2 + 2x - 5 = 0, and prove your answer.")["x-gearbox-upstream"], "openai");
});

test("tools go to the cloud even for an edge-shaped request; the client can force the cloud", () => {
  const tools = [{ type: "function", function: { name: "lookup" } }];
  assert.equal(route("Summarize: the meeting moved to Friday.", {}, { tools })["x-gearbox-upstream"], "openai");
  assert.equal(route("Summarize: the meeting moved to Friday.", { "x-gearbox-route": "cloud" })["x-gearbox-upstream"], "openai");
});

test("allow_client_route: false → a client's x-gearbox-route is ignored", () => {
  const raw = parseConfigText(CONFIG.replace("route:\n", "route:\n  allow_client_route: false\n"), "brief.yaml");
  assert.ok(raw.ok, !raw.ok ? raw.errors.join() : "");
  const config = resolveConfig(raw.value, { K: "sk" }, "brief.yaml");
  assert.ok(config.ok);
  const p = new RequestProcessor({ config: config.value, logger: silentLogger() });
  p.requestHeaders({ ":method": "POST", ":path": "/v1/chat/completions", "content-type": "application/json", "x-gearbox-route": "cloud" }, false);
  const outcome = sync(p.requestBody(Buffer.from(JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: "Summarize in one line: the meeting moved to Friday." }] }))));
  assert.ok(outcome.kind === "continue");
  assert.equal(outcome.mutation?.setHeaders?.["x-gearbox-upstream"], "edge", "the policy decided, not the client");
});

test("a policy plugin decides (asynchronously); a failing one leaves the built-in decision", async () => {
  const raw = parseConfigText(CONFIG, "brief.yaml");
  assert.ok(raw.ok);
  const config = resolveConfig(raw.value, { K: "sk" }, "brief.yaml");
  assert.ok(config.ok);
  const run = async (plugin: ReturnType<typeof createPlugin>, content: string) => {
    const p = new RequestProcessor({ config: config.value, logger: silentLogger(), plugins: [plugin] });
    p.requestHeaders({ ":method": "POST", ":path": "/v1/chat/completions", "content-type": "application/json" }, false);
    const pending = p.requestBody(Buffer.from(JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content }] })));
    assert.ok(pending instanceof Promise, "plugins make the phase asynchronous");
    const outcome = await pending;
    assert.ok(outcome.kind === "continue");
    return outcome.mutation?.setHeaders?.["x-gearbox-upstream"];
  };
  const code = "Write a Python function that parses ISO dates.";
  assert.equal(await run(createPlugin("pin-edge", () => ({ target: "edge", reason: "tenant_on_prem" })), code), "edge");
  assert.equal(await run(createPlugin("broken", () => { throw new Error("boom"); }), code), "openai");
  assert.equal(await run(createPlugin("slow", () => new Promise((r) => setTimeout(() => r({ target: "edge", reason: "late" }), 50)), 5), code), "openai");
});
