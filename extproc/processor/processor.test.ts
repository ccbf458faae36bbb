import assert from "node:assert/strict";
import { test } from "node:test";
import { pino } from "pino";
import { parseConfigText, resolveConfig, type GatewayConfig } from "../config/load.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import type { Outcome } from "./outcome.ts";
import { RequestProcessor } from "./processor.ts";
import { Runtime } from "../runtime/runtime.ts";
import { brokenTelemetry } from "../../test/support/broken-telemetry.ts";

/** Phases without a cloud upgrade answer synchronously. */
function sync(outcome: Outcome | Promise<Outcome>): Outcome {
  assert.ok(!(outcome instanceof Promise), "expected a synchronous outcome");
  return outcome;
}

function config(): GatewayConfig {
  const raw = parseConfigText(
    `
providers:
  - { name: openai, kind: openai, base_url: 'https://api.openai.com/v1', api_key_env: OPENAI_KEY, models: [gpt-4o] }
  - { name: qwen, kind: openai-compatible, base_url: 'https://dashscope.aliyuncs.com/compatible-mode/v1', api_key_env: QWEN_KEY, models: [qwen-plus] }
  - { name: deepseek, kind: openai-compatible, base_url: 'https://api.deepseek.com/v1' }
limits: { max_request_bytes: 1000 }
`,
    "t.yaml",
  );
  assert.ok(raw.ok);
  const resolved = resolveConfig(raw.value, { OPENAI_KEY: "sk-openai", QWEN_KEY: "sk-qwen" }, "t.yaml");
  assert.ok(resolved.ok);
  return resolved.value;
}

const processor = () => new RequestProcessor({ runtime: new Runtime(config()), logger: silentLogger() });
const chatHeaders = (extra: Record<string, string> = {}) => ({
  ":method": "POST",
  ":path": "/v1/chat/completions",
  ":authority": "api.openai.com",
  "content-type": "application/json",
  authorization: "Bearer app-key",
  ...extra,
});
const body = (value: unknown) => Buffer.from(JSON.stringify(value));

interface Json {
  model?: string;
  stream_options?: unknown;
  error?: { message: string; type: string; code: string | null };
}
const json = (b: Buffer | undefined): Json => JSON.parse(b?.toString() ?? "{}") as Json;

function mutation(outcome: Outcome) {
  assert.equal(outcome.kind, "continue");
  return outcome.kind === "continue" ? outcome.mutation : undefined;
}

test("unknown paths pass through untouched in every phase", () => {
  const p = processor();
  assert.deepEqual(p.requestHeaders({ ":method": "POST", ":path": "/v1/files", "content-type": "text/plain" }, false), { kind: "continue" });
  assert.deepEqual(sync(p.requestBody(Buffer.from("anything"))), { kind: "continue" });
  assert.deepEqual(p.responseHeaders({ ":status": "200", "content-type": "text/event-stream" }, false), { kind: "continue" });
  assert.deepEqual(sync(p.responseBody(Buffer.from("data: x\n\n"), true)), { kind: "continue" });
  assert.equal(p.passthrough, true);
});

test("a caller cannot forge Envoy's routing headers, even on a pass-through path", () => {
  const outcome = processor().requestHeaders(
    { ":method": "GET", ":path": "/v1/files", "x-gearbox-upstream": "openai", "x-gearbox-edge-endpoint": "10.0.0.1:80" },
    true,
  );
  assert.deepEqual(mutation(outcome), { removeHeaders: ["x-gearbox-upstream", "x-gearbox-edge-endpoint"], clearRouteCache: true });
});

test("a listed model routes to its provider: path under the base path, key injected, route cleared", () => {
  const p = processor();
  p.requestHeaders(chatHeaders({ "x-gearbox-route": "auto" }), false);
  const m = mutation(sync(p.requestBody(body({ model: "qwen-plus", messages: [{ role: "user", content: "hi" }] }))));
  assert.equal(m?.setHeaders?.[":path"], "/compatible-mode/v1/chat/completions");
  assert.equal(m?.setHeaders?.["x-gearbox-upstream"], "qwen");
  assert.equal(m?.setHeaders?.authorization, "Bearer sk-qwen");
  assert.equal(m?.clearRouteCache, true);
  for (const h of ["x-gearbox-route", "x-gearbox-node", "x-gearbox-intent", "x-gearbox-conversation-id"])
    assert.ok(m?.removeHeaders?.includes(h), `${h} stays inside`);
  assert.equal(m?.body, undefined, "same schema, same model: the client's bytes go upstream unchanged");
});

test("provider/model prefix rewrites the model, and content-length matches the new body", () => {
  const p = processor();
  p.requestHeaders(chatHeaders(), false);
  const m = mutation(sync(p.requestBody(body({ model: "deepseek/deepseek-chat", messages: [{ role: "user", content: "hi" }] }))));
  assert.equal(m?.setHeaders?.["x-gearbox-upstream"], "deepseek");
  assert.ok(m?.body);
  assert.equal(json(m.body).model, "deepseek-chat");
  assert.equal(m.setHeaders?.["content-length"], String(m.body.length));
  assert.equal(m.setHeaders?.authorization, undefined, "no key configured: the caller's Authorization is forwarded");
});

test("unknown models go to the default provider with the query string kept", () => {
  const p = processor();
  p.requestHeaders(chatHeaders({ ":path": "/v1/chat/completions?api-version=1" }), false);
  const m = mutation(sync(p.requestBody(body({ model: "gpt-5", messages: [{ role: "user", content: "hi" }] }))));
  assert.equal(m?.setHeaders?.["x-gearbox-upstream"], "openai");
  assert.equal(m?.setHeaders?.[":path"], "/v1/chat/completions?api-version=1");
});

test("an explicit edge request is refused with 503 rather than sent to a cloud", () => {
  const p = processor();
  p.requestHeaders(chatHeaders({ "x-gearbox-route": "edge" }), false);
  const outcome = sync(p.requestBody(body({ model: "gpt-4o", messages: [{ role: "user", content: "secret" }] })));
  assert.equal(outcome.kind, "respond");
  if (outcome.kind !== "respond") return;
  assert.equal(outcome.response.status, 503);
  assert.equal(json(outcome.response.body).error?.code, "edge_unavailable");
});

test("request header checks: method, content-type, declared length, no body", () => {
  const statusOf = (o: Outcome) => (o.kind === "respond" ? o.response.status : 0);
  assert.equal(statusOf(processor().requestHeaders(chatHeaders({ ":method": "GET" }), true)), 405);
  assert.equal(statusOf(processor().requestHeaders(chatHeaders({ "content-type": "text/plain" }), false)), 415);
  assert.equal(statusOf(processor().requestHeaders(chatHeaders({ "content-length": "5000" }), false)), 413);
  assert.equal(statusOf(processor().requestHeaders(chatHeaders(), true)), 400);
  assert.equal(statusOf(processor().requestHeaders(chatHeaders({ "content-type": "application/json; charset=utf-8" }), false)), 0);
  assert.equal(statusOf(processor().requestHeaders(chatHeaders({ "content-type": " Application/JSON " }), false)), 0);
  assert.equal(statusOf(processor().requestHeaders(chatHeaders({ "content-type": "application/jsonx" }), false)), 415);
  assert.equal(statusOf(processor().requestHeaders(chatHeaders({ "content-type": "" }), false)), 415);
});

test("streamed responses: mode switched to STREAMED, content-length dropped, forced usage chunk hidden", () => {
  const p = processor();
  p.requestHeaders(chatHeaders(), false);
  const sent = body({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }], stream: true });
  const m = mutation(sync(p.requestBody(sent)));
  assert.deepEqual(json(m?.body).stream_options, { include_usage: true });
  assert.equal(m?.body?.toString(), `${sent.toString().slice(0, -1)},"stream_options":{"include_usage":true}}`, "added to the client's own bytes");
  const headers = p.responseHeaders({ ":status": "200", "content-type": "text/event-stream", "content-length": "999" }, false);
  assert.ok(headers.kind === "continue" && headers.streamResponseBody);
  assert.deepEqual(mutation(headers)?.removeHeaders, ["content-length"]);
  assert.equal(mutation(headers)?.setHeaders?.["x-gearbox-route"], "cloud");
  const first = mutation(
    sync(p.responseBody(Buffer.from('data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}],"usage":null}\n\ndata: {"choi'), false)),
  );
  assert.equal(first?.body?.toString(), 'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}],"usage":null}\n\n');
  const last = mutation(
    sync(p.responseBody(Buffer.from('ces":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}\n\ndata: [DONE]\n\n'), true)),
  );
  assert.equal(last?.body?.toString(), "data: [DONE]\n\n");
});

test("a stream's forced usage changes only stream_options: the client's other options, fields and message extensions go on as sent", () => {
  const p = processor();
  p.requestHeaders(chatHeaders(), false);
  const sent = {
    model: "gpt-4o",
    stream: true,
    stream_options: { include_obfuscation: false, include_usage: false },
    messages: [
      { role: "user", content: "hi" },
      { role: "assistant", content: "Sure:", prefix: true },
    ],
    verbosity: "low",
  };
  const m = mutation(sync(p.requestBody(body(sent))));
  assert.deepEqual(json(m?.body), { ...sent, stream_options: { include_obfuscation: false, include_usage: true } });
  assert.deepEqual(Object.keys(json(m?.body)), Object.keys(sent), "the client's key order");
  assert.equal(m?.setHeaders?.["content-length"], String(m?.body?.length));
});

test("a non-OpenAI-shaped upstream error body is replaced by an OpenAI error with the same status", () => {
  const p = processor();
  p.requestHeaders(chatHeaders(), false);
  sync(p.requestBody(body({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] })));
  p.responseHeaders({ ":status": "503", "content-type": "text/plain", "retry-after": "3" }, false);
  const m = mutation(sync(p.responseBody(Buffer.from("upstream overloaded"), true)));
  const error = json(m?.body).error;
  assert.equal(error?.message, "upstream overloaded");
  assert.equal(error?.type, "upstream_error");
  assert.equal(m?.setHeaders?.["content-length"], String(m?.body?.length));
});

test("OpenAI-compatible stream quirks are mended: missing role, tool calls without index or type", () => {
  const p = processor();
  p.requestHeaders(chatHeaders(), false);
  sync(p.requestBody(body({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }], stream: true })));
  p.responseHeaders({ ":status": "200", "content-type": "text/event-stream" }, false);
  const chunk = { choices: [{ index: 0, delta: { tool_calls: [{ id: "call_a", function: { name: "f", arguments: "{" } }] } }] };
  const next = { choices: [{ index: 0, delta: { tool_calls: [{ function: { arguments: "}" } }] } }] };
  const out = mutation(sync(p.responseBody(Buffer.from(`data: ${JSON.stringify(chunk)}\n\ndata: ${JSON.stringify(next)}\n\ndata: [DONE]\n\n`), true)));
  const events = (out?.body?.toString() ?? "")
    .split("\n\n")
    .filter((e) => e.startsWith("data: {"))
    .map((e) => JSON.parse(e.slice(6)) as typeof chunk & { choices: { delta: { role?: string; tool_calls: { index?: number; type?: string }[] } }[] });
  assert.equal(events[0]?.choices[0]?.delta.role, "assistant");
  assert.equal(events[0]?.choices[0]?.delta.tool_calls[0]?.index, 0);
  assert.equal(events[0]?.choices[0]?.delta.tool_calls[0]?.type, "function");
  assert.equal(events[1]?.choices[0]?.delta.tool_calls[0]?.index, 0, "a delta without index continues the latest call");
});

test("a held record is made once, at release: the answer's status, not a later abort's 499", () => {
  const records: { status: number; error_code?: string }[] = [];
  const p = new RequestProcessor({ runtime: new Runtime(config()), logger: silentLogger(), telemetry: { request: (r) => void records.push(r) } });
  p.requestHeaders(chatHeaders(), false);
  sync(p.requestBody(body({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] })));
  p.responseHeaders({ ":status": "200", "content-type": "application/json" }, false);
  p.holdRecord();
  const answer = { choices: [{ index: 0, message: { role: "assistant", content: "Hello" } }], usage: { prompt_tokens: 3, completion_tokens: 1 } };
  assert.equal(sync(p.responseBody(body(answer), true)).kind, "continue");
  assert.equal(records.length, 0, "the record waits while the transport writes the answer");
  p.abort("client disconnected");
  assert.equal(records.length, 0);
  p.releaseRecord();
  assert.deepEqual(
    records.map((r) => r.status),
    [200],
  );
  p.releaseRecord();
  assert.equal(records.length, 1, "released once");
});

test("a record that fails at release is logged, and does not reach the caller", () => {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  const p = new RequestProcessor({ runtime: new Runtime(config()), logger, telemetry: brokenTelemetry().telemetry });
  p.requestHeaders(chatHeaders(), false);
  sync(p.requestBody(body({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] })));
  p.responseHeaders({ ":status": "200", "content-type": "application/json" }, false);
  p.holdRecord();
  sync(p.responseBody(body({ choices: [] }), true));
  assert.doesNotThrow(() => p.releaseRecord());
  assert.equal(lines.filter((l) => l.msg === "request record failed").length, 1);
});
