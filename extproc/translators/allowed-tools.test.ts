/**
 * OpenAI clients as lenient as the providers behind them (tools without `type`, a function
 * tool_choice without `type`), and `tool_choice: allowed_tools` on every backend, seen in the
 * upstream body each backend is sent.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { GatewayError } from "../../common/errors.ts";
import { parseOpenAIChatRequest } from "../../common/schemas/openai-chat-request.ts";
import type { ProviderKind } from "../providers/catalog.ts";
import { plainProvider } from "../providers/provider.ts";
import { planChat } from "./select.ts";

const CTX = { upstreamModel: "up-m", forceStreamUsage: false };
const fn = (name: string) => ({ type: "function", function: { name, parameters: { type: "object", properties: { q: { type: "string" } } } } });

function upstream(raw: Record<string, unknown>, kind: ProviderKind): Record<string, unknown> {
  const parsed = parseOpenAIChatRequest(raw);
  assert.ok(parsed.ok, JSON.stringify(!parsed.ok && parsed.errors));
  const provider = plainProvider({ name: `p-${kind}`, kind, baseUrl: new URL("http://127.0.0.1:1/v1"), timeoutMs: 1000 });
  const plan = planChat("openai", provider, parsed.value, raw, CTX);
  return JSON.parse(plan.upstream.body?.toString("utf8") ?? "null") as Record<string, unknown>;
}

const ALLOWED = (mode: "auto" | "required") => ({
  model: "m",
  messages: [{ role: "user", content: "Go." }],
  tools: [fn("a"), fn("b"), fn("c")],
  tool_choice: { type: "allowed_tools", allowed_tools: { mode, tools: [{ type: "function", function: { name: "b" } }] } },
});

test("a tool without type and a function tool_choice without type are accepted as functions", () => {
  const raw = { model: "m", messages: [{ role: "user", content: "Go." }], tools: [{ function: fn("a").function }], tool_choice: { function: { name: "a" } } };
  const parsed = parseOpenAIChatRequest(raw);
  assert.ok(parsed.ok);
  assert.deepEqual(parsed.value.toolChoice, { type: "function", name: "a" });
  assert.equal(parsed.value.tools?.[0]?.name, "a");
  const bad = parseOpenAIChatRequest({ ...raw, tools: [{ type: "retrieval" }] });
  assert.ok(!bad.ok);
  assert.equal(bad.errors[0]?.param, "tools[0].type");
});

test("allowed_tools → OpenAI-compatible: passed on as allowed_tools", () => {
  const body = upstream(ALLOWED("required"), "openai");
  assert.deepEqual(body.tool_choice, { type: "allowed_tools", allowed_tools: { mode: "required", tools: [{ type: "function", function: { name: "b" } }] } });
  assert.equal((body.tools as unknown[]).length, 3, "the full tool list stays");
});

test("allowed_tools → Anthropic: only the named tools, any for required, auto for auto", () => {
  for (const [mode, type] of [
    ["required", "any"],
    ["auto", "auto"],
  ] as const) {
    const body = upstream(ALLOWED(mode), "anthropic");
    assert.deepEqual(
      (body.tools as { name: string }[]).map((t) => t.name),
      ["b"],
    );
    assert.deepEqual(body.tool_choice, { type });
  }
});

test("allowed_tools → Gemini: ANY + allowedFunctionNames for required; AUTO over the named declarations for auto", () => {
  const required = upstream(ALLOWED("required"), "gemini");
  assert.deepEqual(required.toolConfig, { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["b"] } });
  const auto = upstream(ALLOWED("auto"), "gemini");
  assert.deepEqual(auto.toolConfig, { functionCallingConfig: { mode: "AUTO" } });
  assert.deepEqual(
    (auto.tools as { functionDeclarations: { name: string }[] }[])[0]?.functionDeclarations.map((d) => d.name),
    ["b"],
  );
});

test("allowed_tools → Ollama: the named tools for auto; required is a 400 naming the mode", () => {
  assert.deepEqual(
    (upstream(ALLOWED("auto"), "ollama").tools as { function: { name: string } }[]).map((t) => t.function.name),
    ["b"],
  );
  assert.throws(
    () => upstream(ALLOWED("required"), "ollama"),
    (e: unknown) => e instanceof GatewayError && e.status === 400 && e.param === "tool_choice.allowed_tools.mode",
  );
});

test("allowed_tools without a mode or with a non-function entry is a 400 on that field", () => {
  const noMode = parseOpenAIChatRequest({ ...ALLOWED("auto"), tool_choice: { type: "allowed_tools", allowed_tools: { tools: [] } } });
  assert.ok(!noMode.ok);
  assert.equal(noMode.errors[0]?.param, "tool_choice.allowed_tools.mode");
  const bad = parseOpenAIChatRequest({ ...ALLOWED("auto"), tool_choice: { type: "allowed_tools", allowed_tools: { mode: "auto", tools: [{ type: "mcp" }] } } });
  assert.ok(!bad.ok);
  assert.equal(bad.errors[0]?.param, "tool_choice.allowed_tools.tools[0]");
});
