import assert from "node:assert/strict";
import { test } from "node:test";
import { parseConfigText, resolveConfig } from "../config/load.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import type { Outcome } from "./outcome.ts";
import { RequestProcessor } from "./processor.ts";
import { Runtime } from "../runtime/runtime.ts";

/** Phases without a cloud upgrade answer synchronously. */
function sync(outcome: Outcome | Promise<Outcome>): Outcome {
  assert.ok(!(outcome instanceof Promise), "expected a synchronous outcome");
  return outcome;
}

const KEYS = { OPENAI_API_KEY: "sk-openai-secret-0000abcd", DEEPSEEK_API_KEY: "sk-ds-secret", AZ_KEY: "az-secret-key" };

function processor() {
  const raw = parseConfigText(
    `
providers:
  - { name: openai, preset: openai, models: [gpt-4o], aliases: { fast: gpt-4o-mini } }
  - { name: ds, preset: deepseek, models: [deepseek-chat] }
  - { name: az, kind: azure-openai, base_url: 'https://res.openai.azure.com/openai', api_version: '2024-10-21', api_key_env: AZ_KEY, models: [my-deployment] }
  - { name: local, preset: vllm, models: [llama-3] }
`,
    "t.yaml",
  );
  assert.ok(raw.ok);
  const config = resolveConfig(raw.value, KEYS, "t.yaml");
  assert.ok(config.ok, !config.ok ? config.errors.join() : "");
  return new RequestProcessor({ runtime: new Runtime(config.value), logger: silentLogger() });
}

function send(p: RequestProcessor, body: unknown, headers: Record<string, string> = {}) {
  p.requestHeaders(
    {
      ":method": "POST",
      ":path": "/v1/chat/completions",
      "content-type": "application/json",
      authorization: "Bearer gearbox-call-key",
      "x-api-key": "also-a-client-key",
      ...headers,
    },
    false,
  );
  const outcome = sync(p.requestBody(Buffer.from(JSON.stringify(body))));
  assert.equal(outcome.kind, "continue");
  return outcome.kind === "continue" ? (outcome.mutation ?? {}) : {};
}

test("the caller's credentials never go upstream; the provider's key replaces them", () => {
  const m = send(processor(), { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] });
  assert.equal(m.setHeaders?.authorization, "Bearer sk-openai-secret-0000abcd");
  assert.ok(m.removeHeaders?.includes("x-api-key"));
  assert.ok(m.removeHeaders?.includes("api-key"));
  assert.ok(!m.removeHeaders?.includes("authorization"), "set, not removed (Envoy would apply both)");
});

test("a provider without credentials gets none, and the caller's are still removed", () => {
  const m = send(processor(), { model: "llama-3", messages: [{ role: "user", content: "hi" }] });
  assert.equal(m.setHeaders?.authorization, undefined);
  assert.ok(m.removeHeaders?.includes("authorization"));
});

test("Azure: deployment path with api-version, and the api-key header", () => {
  const m = send(processor(), { model: "my-deployment", messages: [{ role: "user", content: "hi" }] });
  assert.equal(m.setHeaders?.[":path"], "/openai/deployments/my-deployment/chat/completions?api-version=2024-10-21");
  assert.equal(m.setHeaders?.["api-key"], "az-secret-key");
});

test("aliases map a client-facing name to the provider's model", () => {
  const m = send(processor(), { model: "fast", messages: [{ role: "user", content: "hi" }] });
  assert.equal(m.setHeaders?.["x-gearbox-upstream"], "openai");
  assert.equal((JSON.parse(m.body?.toString() ?? "{}") as { model: string }).model, "gpt-4o-mini");
});

test("a provider's parameter differences are applied (DeepSeek drops n and seed)", () => {
  const m = send(processor(), { model: "deepseek-chat", messages: [{ role: "user", content: "hi" }], n: 1, seed: 7, temperature: 0.5 });
  const body = JSON.parse(m.body?.toString() ?? "{}") as Record<string, unknown>;
  assert.equal(body.n, undefined);
  assert.equal(body.seed, undefined);
  assert.equal(body.temperature, 0.5);
  assert.equal(m.setHeaders?.["content-length"], String(m.body?.length));
});

test("a provider error quoting the key is redacted before it reaches the client", () => {
  const p = processor();
  send(p, { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] });
  p.responseHeaders({ ":status": "401", "content-type": "application/json" }, false);
  const upstream = {
    error: {
      message: "Incorrect API key provided: sk-opena*************abcd. You can find your API key at …",
      type: "invalid_request_error",
      code: "invalid_api_key",
    },
  };
  const outcome: Outcome = sync(p.responseBody(Buffer.from(JSON.stringify(upstream)), true));
  assert.equal(outcome.kind, "continue");
  const body = outcome.kind === "continue" ? (outcome.mutation?.body?.toString() ?? "") : "";
  assert.doesNotMatch(body, /abcd/);
  assert.match(body, /\[REDACTED\]/);
});
