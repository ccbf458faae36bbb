/**
 * The Messages endpoint on each backend, seen from the upstream request it plans: Anthropic gets
 * the client's bytes; other backends get structured output in their own form, or a 400 naming the
 * field they cannot express.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { GatewayError } from "../../common/errors.ts";
import type { ProviderKind } from "../providers/catalog.ts";
import { plainProvider, type Provider } from "../providers/provider.ts";
import { anthropicMessagesEndpoint } from "./anthropic-messages.ts";

const CTX = { upstreamModel: "m", forceStreamUsage: false };
const SCHEMA = { type: "object", properties: { name: { type: "string" } }, required: ["name"], additionalProperties: false };

function provider(kind: ProviderKind): Provider {
  return plainProvider({ name: `p-${kind}`, kind, baseUrl: new URL("http://127.0.0.1:1/v1"), timeoutMs: 1000 });
}

function plan(body: Record<string, unknown>, kind: ProviderKind) {
  const parsed = anthropicMessagesEndpoint.parse(body);
  assert.ok(parsed.ok, JSON.stringify(!parsed.ok && parsed.errors));
  return parsed.value.plan(provider(kind), CTX);
}

const upstreamJson = (body: Record<string, unknown>, kind: ProviderKind) =>
  JSON.parse(plan(body, kind).upstream.body?.toString("utf8") ?? "null") as Record<string, unknown>;

const WITH_SERVER_TOOL = {
  model: "m",
  max_tokens: 64,
  messages: [{ role: "user", content: "Look it up." }],
  tools: [{ type: "web_search_20250305", name: "web_search" }],
};

test("Anthropic backend: a server tool goes upstream in the client's bytes, no anthropic-version forced", () => {
  const p = plan(WITH_SERVER_TOOL, "anthropic");
  assert.equal(p.upstream.body, undefined, "the client's bytes, unchanged");
  assert.equal(p.upstream.headers["anthropic-version"], undefined, "the client's own anthropic-version goes through");
});

for (const kind of ["openai", "gemini", "ollama"] as const) {
  test(`${kind} backend: a server tool is a 400 naming the field and the backend`, () => {
    assert.throws(
      () => plan(WITH_SERVER_TOOL, kind),
      (err: unknown) =>
        err instanceof GatewayError &&
        err.status === 400 &&
        err.param === "tools[0].type" &&
        err.code === "unsupported_on_backend" &&
        err.message.includes("web_search_20250305") &&
        err.message.includes(`(${kind})`),
    );
  });
}

const STRUCTURED = {
  model: "m",
  max_tokens: 64,
  messages: [{ role: "user", content: "A name." }],
  output_config: { format: { type: "json_schema", schema: SCHEMA } },
};

test("output_config.format → OpenAI response_format json_schema", () => {
  const body = upstreamJson(STRUCTURED, "openai");
  assert.deepEqual(body.response_format, { type: "json_schema", json_schema: { name: "output", schema: SCHEMA, strict: true } });
});

test("output_config.format → Gemini responseMimeType + the schema", () => {
  const config = upstreamJson(STRUCTURED, "gemini").generationConfig as Record<string, unknown>;
  assert.equal(config.responseMimeType, "application/json");
  assert.deepEqual(config.responseJsonSchema, SCHEMA, "the full JSON Schema, additionalProperties included");
});

test("the beta's top-level output_format too; a format without schema is a 400 on its field", () => {
  const { output_config: _c, ...rest } = STRUCTURED;
  const body = upstreamJson({ ...rest, output_format: { type: "json_schema", schema: SCHEMA } }, "openai");
  assert.equal((body.response_format as { type: string }).type, "json_schema");
  const bad = anthropicMessagesEndpoint.parse({ ...rest, output_config: { format: { type: "json_schema" } } });
  assert.ok(!bad.ok);
  assert.equal(bad.errors[0]?.param, "output_config.format.schema");
});
