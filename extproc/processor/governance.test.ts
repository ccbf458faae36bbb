/**
 * The processor under governance (memory stores): the caller is authenticated before anything
 * else, admitted against its limits after routing, and a token or cost cap with
 * `degrade_to_edge` sends the call to the edge instead of refusing it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseConfigText, resolveConfig, type GatewayConfig } from "../config/load.ts";
import { createAuthDeps } from "../governance/auth.ts";
import { Governor } from "../governance/governor.ts";
import { generateKey } from "../governance/keys.ts";
import { MemoryLimiter } from "../store/memory-limiter.ts";
import { MemoryTenantStore } from "../store/memory-tenant-store.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import type { Outcome } from "./outcome.ts";
import { RequestProcessor, type ProcessorDeps } from "./processor.ts";
import { Runtime } from "../runtime/runtime.ts";

function config(tenantYaml: string): GatewayConfig {
  const raw = parseConfigText(
    `providers:\n  - { name: openai, kind: openai, base_url: 'https://api.openai.com/v1', api_key_env: K, pricing: { gpt-4o: { input: 2.5, output: 10 } } }\n` +
      `edge:\n  agents: [{ address: '10.0.0.7:8088', models: [qwen-small] }]\n  default_model: qwen-small\n` +
      `tenants:\n${tenantYaml}`,
    "t.yaml",
  );
  assert.ok(raw.ok, raw.ok ? "" : raw.errors.join());
  const resolved = resolveConfig(raw.value, { K: "sk" }, "t.yaml");
  assert.ok(resolved.ok);
  return resolved.value;
}

async function setup(tenantYaml: string) {
  const cfg = config(tenantYaml);
  const store = new MemoryTenantStore();
  const { key, record } = generateKey({ role: "call", tenant: "shop", name: "web", createdBy: "test" });
  await store.putKey(record);
  const governor = new Governor({ store: new MemoryLimiter(), runaway: cfg.runaway, logger: silentLogger() });
  const deps: ProcessorDeps = { runtime: new Runtime(cfg), logger: silentLogger(), governance: { auth: createAuthDeps(cfg, store, {}), governor } };
  return { deps, key, close: () => governor.close() };
}

async function call(deps: ProcessorDeps, key: string | undefined, content = "Write a Python function that parses ISO dates."): Promise<Outcome> {
  const p = new RequestProcessor(deps);
  p.requestHeaders(
    { ":method": "POST", ":path": "/v1/chat/completions", "content-type": "application/json", ...(key && { authorization: `Bearer ${key}` }) },
    false,
    { address: "10.1.2.3" },
  );
  const outcome = await p.requestBody(Buffer.from(JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content }], max_tokens: 1000 })));
  p.abort("test over");
  return outcome;
}

test("no key: 401 before the body is even looked at", async () => {
  const { deps, close } = await setup("  - { id: shop }\n");
  const outcome = await call(deps, undefined);
  assert.equal(outcome.kind, "respond");
  assert.equal(outcome.kind === "respond" ? outcome.response.status : 0, 401);
  close();
});

test("a daily cost cap smaller than the call's estimate: 429 naming the cap", async () => {
  const { deps, key, close } = await setup("  - { id: shop, limits: { daily_cost_usd: 0.001 } }\n");
  const outcome = await call(deps, key);
  assert.ok(outcome.kind === "respond");
  assert.equal(outcome.response.status, 429);
  const body = JSON.parse(outcome.response.body.toString()) as { error: { code: string; message: string } };
  assert.equal(body.error.code, "daily_cost_cap");
  assert.match(body.error.message, /shop/);
  close();
});

test("the same cap with degrade_to_edge: the call goes to the edge instead of being refused", async () => {
  const { deps, key, close } = await setup("  - { id: shop, limits: { daily_cost_usd: 0.001 }, degrade_to_edge: true }\n");
  const outcome = await call(deps, key);
  assert.ok(outcome.kind === "continue");
  assert.equal(outcome.mutation?.setHeaders?.["x-gearbox-upstream"], "edge");
  assert.equal(outcome.mutation?.edgeEndpoint, "10.0.0.7:8088");
  close();
});
