/**
 * The runtime: an immutable snapshot per configuration, swapped whole; a request keeps the
 * snapshot it started under; what outlives a configuration (the routing state, the providers'
 * health, the static agents' round-robin turn) carries over a swap.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { silentLogger } from "../../common/telemetry/logger.ts";
import { parseConfigText, resolveConfig, type GatewayConfig } from "../config/load.ts";
import { RequestProcessor } from "../processor/processor.ts";
import { Runtime } from "./runtime.ts";

const CONFIG = `
providers:
  - { name: openai, kind: openai, base_url: 'http://127.0.0.1:9/v1', api_key_env: K }
edge:
  agents: [{ address: '10.0.0.7:8088', models: [qwen-small] }, { address: '10.0.0.8:8088', models: [qwen-small] }]
  default_model: qwen-small
route:
  allow_client_route: true
`;

function load(): GatewayConfig {
  const raw = parseConfigText(CONFIG, "runtime.yaml");
  assert.ok(raw.ok, raw.ok ? "" : raw.errors.join());
  const config = resolveConfig(raw.value, { K: "sk-test" }, "runtime.yaml");
  assert.ok(config.ok, config.ok ? "" : config.errors.join());
  return config.value;
}

test("a snapshot is frozen and versioned; apply swaps in the next one whole", () => {
  const config = load();
  const runtime = new Runtime(config);
  const first = runtime.current();
  assert.equal(first.version, 1);
  assert.ok(Object.isFrozen(first));
  assert.throws(() => ((first as { config: GatewayConfig }).config = config), TypeError);
  const next = runtime.apply({ ...config, route: { ...config.route, allow_client_route: false } });
  assert.equal(next.version, 2);
  assert.equal(runtime.current(), next);
  assert.equal(first.policy.allowClientRoute, true, "the old snapshot is untouched");
  assert.equal(next.policy.allowClientRoute, false);
});

test("what a policy push does not change carries over: state, providers' health, the static agents and their turn", () => {
  const config = load();
  const runtime = new Runtime(config);
  const before = runtime.current();
  const turn = [before.edgeAgents.pick("qwen-small")?.address, before.edgeAgents.pick("qwen-small")?.address];
  assert.notEqual(turn[0], turn[1], "the static set takes turns");
  const state = runtime.state;
  state.sticky.set("conv-1", "edge");
  const after = runtime.apply({ ...config, route: { ...config.route, allow_client_route: false } });
  assert.equal(runtime.state, state);
  assert.equal(runtime.state.sticky.get("conv-1"), "edge");
  assert.equal(after.providerHealth, before.providerHealth);
  assert.equal(after.edgeAgents, before.edgeAgents);
  assert.equal(after.edgeAgents.pick("qwen-small")?.address, turn[0], "the turn goes on where it was");
  // A new edge section is a new static set.
  const moved = runtime.apply({ ...config, edge: { ...config.edge, agents: [{ address: "10.0.0.9:8088", models: ["qwen-small"] }] } });
  assert.notEqual(moved.edgeAgents, before.edgeAgents);
  assert.equal(moved.edgeAgents.pick("qwen-small")?.address, "10.0.0.9:8088");
});

test("a request keeps the snapshot it started under; the next one runs under the new", () => {
  const config = load();
  const runtime = new Runtime(config);
  const headers = { ":method": "POST", ":path": "/v1/chat/completions", "content-type": "application/json", "x-gearbox-route": "cloud" };
  const body = Buffer.from(JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: "Summarize in one line: the meeting moved to Friday." }] }));
  const started = new RequestProcessor({ runtime, logger: silentLogger() });
  started.requestHeaders(headers, false);
  // The push: clients may no longer pick the gear.
  runtime.apply({ ...config, route: { ...config.route, allow_client_route: false } });
  const later = new RequestProcessor({ runtime, logger: silentLogger() });
  later.requestHeaders(headers, false);
  const first = started.requestBody(body);
  const second = later.requestBody(body);
  assert.ok(!(first instanceof Promise) && !(second instanceof Promise));
  assert.equal(first.kind === "continue" && first.mutation?.setHeaders?.["x-gearbox-upstream"], "openai", "the client's cloud, under the old policy");
  assert.equal(
    second.kind === "continue" && second.mutation?.setHeaders?.["x-gearbox-upstream"],
    "edge",
    "the header ignored (the easy summary goes to the edge), under the new one",
  );
});

test("a phase out of order is refused, never processed", () => {
  const p = new RequestProcessor({ runtime: new Runtime(load()), logger: silentLogger() });
  assert.throws(() => p.requestBody(Buffer.from("{}")), /phase request_body cannot follow start/);
  p.requestHeaders({ ":method": "GET", ":path": "/v1/models" }, true);
  p.responseHeaders({ ":status": "200" }, false);
  assert.throws(() => p.requestHeaders({ ":path": "/v1/models" }, true), /phase request_headers cannot follow response_headers/);
});
