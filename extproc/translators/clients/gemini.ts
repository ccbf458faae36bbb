/**
 * Canonical → what Google's SDKs (`@google/genai`) expect from `generateContent` and
 * `streamGenerateContent?alt=sse`: a `GenerateContentResponse`, SSE events of partial responses,
 * and errors in Google's shape (`{error: {code, message, status}}`).
 *
 * Parts of a candidate: reasoning as `{text, thought: true}`, the text, then each tool call as a
 * whole `functionCall` (`id` and `thoughtSignature` when a Gemini backend issued them, unpacked
 * from the canonical id). Finish: stop → STOP, length → MAX_TOKENS, content_filter → SAFETY,
 * tool_calls → STOP; a refusal is a candidate without content whose `finishMessage` says why
 * (as Gemini reports a blocked candidate). Usage: `promptTokenCount`, `candidatesTokenCount` (output minus reasoning),
 * `thoughtsTokenCount`, `cachedContentTokenCount`, `totalTokenCount`. A stream sends text and
 * reasoning as they come and each call once its arguments are complete (Gemini sends calls
 * whole), the finish reason and usage on the last event.
 */
import type { ChatChunk, ChatResponse, FinishReason, ToolCall, Usage } from "../../../common/canonical/types.ts";
import type { GatewayError } from "../../../common/errors.ts";
import { isObject, type JsonObject } from "../../../common/schemas/fields.ts";
import { decodeCallId } from "../backends/gemini-call-id.ts";
import type { ChatClient, ChatStreamEncoder } from "../codec.ts";

const FINISH: Readonly<Record<FinishReason, string>> = {
  stop: "STOP",
  length: "MAX_TOKENS",
  tool_calls: "STOP",
  content_filter: "SAFETY",
  function_call: "STOP",
};

const STATUS: Readonly<Record<number, string>> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  409: "ABORTED",
  413: "INVALID_ARGUMENT",
  429: "RESOURCE_EXHAUSTED",
  499: "CANCELLED",
  501: "UNIMPLEMENTED",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

/** Google's error body for `err` (`status` from the HTTP status; the field Gearbox names in `details`). */
export function geminiErrorBody(err: GatewayError): Buffer {
  const error: JsonObject = { code: err.status, message: err.message, status: STATUS[err.status] ?? (err.status >= 500 ? "INTERNAL" : "FAILED_PRECONDITION") };
  if (typeof err.param === "string" && err.param !== "")
    error.details = [{ "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [{ field: err.param, description: err.message }] }];
  return Buffer.from(JSON.stringify({ error }));
}

export function geminiUsage(u: Usage): JsonObject {
  const thoughts = u.reasoningTokens ?? 0;
  const out: JsonObject = { promptTokenCount: u.inputTokens, candidatesTokenCount: Math.max(0, u.outputTokens - thoughts), totalTokenCount: u.totalTokens };
  if (thoughts > 0) out.thoughtsTokenCount = thoughts;
  if (u.cachedInputTokens) out.cachedContentTokenCount = u.cachedInputTokens;
  return out;
}

function callPart(call: Pick<ToolCall, "id" | "name" | "arguments">): JsonObject {
  let args: unknown = {};
  try {
    args = call.arguments.trim() === "" ? {} : JSON.parse(call.arguments);
  } catch {
    args = { arguments: call.arguments };
  }
  const data = decodeCallId(call.id);
  const functionCall: JsonObject = { name: call.name, args: isObject(args) ? args : { value: args } };
  if (data.id !== undefined) functionCall.id = data.id;
  const part: JsonObject = { functionCall };
  if (data.thoughtSignature !== undefined) part.thoughtSignature = data.thoughtSignature;
  return part;
}

export const geminiClient: ChatClient = {
  response(res: ChatResponse) {
    const candidates = res.choices.map((choice) => {
      const m = choice.message;
      const parts: JsonObject[] = [];
      if (m.reasoning) parts.push({ text: m.reasoning, thought: true });
      const text = typeof m.content === "string" ? m.content : (m.content ?? []).map((p) => p.text).join("");
      if (text !== "") parts.push({ text });
      for (const call of m.toolCalls ?? []) parts.push(callPart(call));
      const candidate: JsonObject = { finishReason: FINISH[choice.finishReason ?? "stop"], index: choice.index };
      // A refusal is Gemini's blocked candidate: no content, the reason in `finishMessage`.
      if (m.refusal) candidate.finishMessage = m.refusal;
      if (parts.length > 0 || !m.refusal) candidate.content = { role: "model", parts: parts.length > 0 ? parts : [{ text: "" }] };
      return candidate;
    });
    const body: JsonObject = { candidates, modelVersion: res.model, responseId: res.id };
    if (res.usage) body.usageMetadata = geminiUsage(res.usage);
    return Buffer.from(JSON.stringify(body));
  },
  stream: () => new GeminiStreamEncoder(),
  error: geminiErrorBody,
};

const sse = (body: JsonObject): Buffer => Buffer.from(`data: ${JSON.stringify(body)}\r\n\r\n`);

interface PendingCall {
  id: string;
  name: string;
  arguments: string;
}

class GeminiStreamEncoder implements ChatStreamEncoder {
  private readonly calls = new Map<string, PendingCall>();
  private finish: FinishReason | undefined;
  private refusal = "";
  private usage: Usage | undefined;
  private model = "";
  private id = "";

  chunk(chunk: ChatChunk): Buffer {
    if (chunk.model) this.model = chunk.model;
    if (chunk.id) this.id = chunk.id;
    if (chunk.usage) this.usage = chunk.usage;
    const out: Buffer[] = [];
    for (const choice of chunk.choices) {
      const parts: JsonObject[] = [];
      if (choice.delta.reasoning) parts.push({ text: choice.delta.reasoning, thought: true });
      if (choice.delta.content) parts.push({ text: choice.delta.content });
      if (choice.delta.refusal) this.refusal += choice.delta.refusal;
      for (const t of choice.delta.toolCalls ?? []) {
        const key = `${choice.index}:${t.index}`;
        const call = this.calls.get(key) ?? { id: "", name: "", arguments: "" };
        if (t.id) call.id = t.id;
        if (t.name) call.name = t.name;
        if (t.arguments) call.arguments += t.arguments;
        this.calls.set(key, call);
      }
      if (choice.finishReason) this.finish = choice.finishReason;
      if (parts.length > 0) out.push(sse(this.event(parts, choice.index)));
    }
    return Buffer.concat(out);
  }

  end(): Buffer {
    const parts = [...this.calls.values()].map(callPart);
    if (parts.length === 0) parts.push({ text: "" });
    const event = this.event(parts, 0);
    const [candidate] = event.candidates as JsonObject[];
    if (candidate) {
      candidate.finishReason = FINISH[this.finish ?? "stop"];
      if (this.refusal !== "") candidate.finishMessage = this.refusal;
    }
    if (this.usage) event.usageMetadata = geminiUsage(this.usage);
    return sse(event);
  }

  error(err: GatewayError): Buffer {
    return sse(JSON.parse(geminiErrorBody(err).toString("utf8")) as JsonObject);
  }

  private event(parts: JsonObject[], index: number): JsonObject {
    return { candidates: [{ content: { role: "model", parts }, index }], modelVersion: this.model, responseId: this.id };
  }
}
