/**
 * OpenAI Chat Completions responses and stream chunks ⇄ canonical. Upstream bodies are read
 * leniently (providers add fields and omit optional ones); what is not modelled stays in `extra`.
 */
import type { AssistantMessage, ChatChunk, ChatResponse, ChunkChoice, FinishReason, ToolCall, ToolCallDelta, Usage } from "../canonical/types.ts";
import { fail, ok, type Result } from "../result.ts";
import { extraFields, isObject, type JsonObject } from "./fields.ts";
import { messageToOpenAI } from "./openai-chat-emit.ts";

const RESPONSE_FIELDS = new Set(["id", "object", "created", "model", "choices", "usage", "system_fingerprint"]);
const FINISH_REASONS = new Set<FinishReason>(["stop", "length", "tool_calls", "content_filter", "function_call"]);

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

function finishReason(v: unknown): FinishReason | null {
  return typeof v === "string" && FINISH_REASONS.has(v as FinishReason) ? (v as FinishReason) : null;
}

/** OpenAI `usage` (with `prompt_tokens_details.cached_tokens`, reasoning tokens) → canonical. */
export function parseOpenAIUsage(raw: unknown): Usage | undefined {
  if (!isObject(raw)) return undefined;
  const input = num(raw.prompt_tokens) ?? 0;
  const output = num(raw.completion_tokens) ?? 0;
  const usage: Usage = { inputTokens: input, outputTokens: output, totalTokens: num(raw.total_tokens) ?? input + output };
  const cached = isObject(raw.prompt_tokens_details) ? num(raw.prompt_tokens_details.cached_tokens) : undefined;
  const reasoning = isObject(raw.completion_tokens_details) ? num(raw.completion_tokens_details.reasoning_tokens) : undefined;
  if (cached !== undefined) usage.cachedInputTokens = cached;
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  return usage;
}

export function usageToOpenAI(u: Usage): JsonObject {
  const out: JsonObject = { prompt_tokens: u.inputTokens, completion_tokens: u.outputTokens, total_tokens: u.totalTokens };
  if (u.cachedInputTokens !== undefined) out.prompt_tokens_details = { cached_tokens: u.cachedInputTokens };
  if (u.reasoningTokens !== undefined) out.completion_tokens_details = { reasoning_tokens: u.reasoningTokens };
  return out;
}

function parseToolCalls(raw: unknown): ToolCall[] | undefined {
  if (!Array.isArray(raw)) return undefined;
  return raw.filter(isObject).map((c) => {
    const fn = isObject(c.function) ? c.function : {};
    return { id: str(c.id) ?? "", name: str(fn.name) ?? "", arguments: str(fn.arguments) ?? "" };
  });
}

function parseAssistant(raw: JsonObject): AssistantMessage {
  const content = raw.content;
  const message: AssistantMessage = { role: "assistant", content: typeof content === "string" ? content : null };
  const refusal = raw.refusal;
  if (typeof refusal === "string" || refusal === null) message.refusal = refusal;
  const toolCalls = parseToolCalls(raw.tool_calls);
  if (toolCalls && toolCalls.length > 0) message.toolCalls = toolCalls;
  const reasoning = str(raw.reasoning_content) ?? str(raw.reasoning);
  if (reasoning !== undefined) message.reasoning = reasoning;
  return message;
}

export function parseOpenAIChatResponse(json: unknown): Result<ChatResponse> {
  if (!isObject(json) || !Array.isArray(json.choices)) return fail("not a chat completion: 'choices' is missing");
  const response: ChatResponse = {
    id: str(json.id) ?? "",
    created: num(json.created) ?? 0,
    model: str(json.model) ?? "",
    choices: json.choices.filter(isObject).map((c, i) => {
      const choice = {
        index: num(c.index) ?? i,
        message: parseAssistant(isObject(c.message) ? c.message : {}),
        finishReason: finishReason(c.finish_reason),
      };
      return c.logprobs === undefined || c.logprobs === null ? choice : Object.assign({}, choice, { logprobs: c.logprobs });
    }),
    extra: extraFields(json, RESPONSE_FIELDS),
  };
  const usage = parseOpenAIUsage(json.usage);
  if (usage) response.usage = usage;
  if (typeof json.system_fingerprint === "string" || json.system_fingerprint === null) response.systemFingerprint = json.system_fingerprint;
  return ok(response);
}

export function toOpenAIChatResponse(res: ChatResponse): JsonObject {
  // Object.assign, not a literal starting with `...res.extra`: keys after a leading spread cost ~1 µs each on Node 20.
  const out: JsonObject = Object.assign({}, res.extra, {
    id: res.id,
    object: "chat.completion",
    created: res.created,
    model: res.model,
    choices: res.choices.map((c) => ({
      index: c.index,
      message: assistantToOpenAI(c.message),
      logprobs: c.logprobs ?? null,
      finish_reason: c.finishReason,
    })),
  });
  if (res.usage) out.usage = usageToOpenAI(res.usage);
  if (res.systemFingerprint !== undefined) out.system_fingerprint = res.systemFingerprint;
  return out;
}

/** A response message: the request emitter's assistant shape, content flattened to a string. */
function assistantToOpenAI(m: AssistantMessage): JsonObject {
  const content = Array.isArray(m.content) ? m.content.map((p) => p.text).join("") : m.content;
  const out = messageToOpenAI(Object.assign({}, m, { content }));
  if (m.reasoning !== undefined) out.reasoning_content = m.reasoning;
  return out;
}

function parseToolCallDeltas(raw: unknown): ToolCallDelta[] | undefined {
  if (!Array.isArray(raw)) return undefined;
  return raw.filter(isObject).map((c, i) => {
    const delta: ToolCallDelta = { index: num(c.index) ?? i };
    const fn = isObject(c.function) ? c.function : {};
    const id = str(c.id);
    const name = str(fn.name);
    const args = str(fn.arguments);
    if (id !== undefined) delta.id = id;
    if (name !== undefined) delta.name = name;
    if (args !== undefined) delta.arguments = args;
    return delta;
  });
}

export function parseOpenAIChatChunk(json: unknown): Result<ChatChunk> {
  if (!isObject(json) || !Array.isArray(json.choices)) return fail("not a chat completion chunk: 'choices' is missing");
  const chunk: ChatChunk = {
    id: str(json.id) ?? "",
    created: num(json.created) ?? 0,
    model: str(json.model) ?? "",
    choices: json.choices.filter(isObject).map((c, i): ChunkChoice => {
      const d = isObject(c.delta) ? c.delta : {};
      const delta: ChunkChoice["delta"] = {};
      if (d.role === "assistant") delta.role = "assistant";
      if (typeof d.content === "string" || d.content === null) delta.content = d.content;
      if (typeof d.refusal === "string" || d.refusal === null) delta.refusal = d.refusal;
      const reasoning = str(d.reasoning_content) ?? str(d.reasoning);
      if (reasoning !== undefined) delta.reasoning = reasoning;
      const toolCalls = parseToolCallDeltas(d.tool_calls);
      if (toolCalls) delta.toolCalls = toolCalls;
      const choice: ChunkChoice = { index: num(c.index) ?? i, delta, finishReason: finishReason(c.finish_reason) };
      if (c.logprobs !== undefined && c.logprobs !== null) choice.logprobs = c.logprobs;
      return choice;
    }),
    extra: extraFields(json, RESPONSE_FIELDS),
  };
  if (json.usage === null) chunk.usage = null;
  else {
    const usage = parseOpenAIUsage(json.usage);
    if (usage) chunk.usage = usage;
  }
  return ok(chunk);
}

export function toOpenAIChatChunk(chunk: ChatChunk): JsonObject {
  // Object.assign, not a literal starting with `...chunk.extra`: keys after a leading spread cost ~1 µs each on Node 20.
  const out: JsonObject = Object.assign({}, chunk.extra, {
    id: chunk.id,
    object: "chat.completion.chunk",
    created: chunk.created,
    model: chunk.model,
    choices: chunk.choices.map((c) => {
      const delta: JsonObject = {};
      if (c.delta.role) delta.role = c.delta.role;
      if (c.delta.content !== undefined) delta.content = c.delta.content;
      if (c.delta.refusal !== undefined) delta.refusal = c.delta.refusal;
      if (c.delta.reasoning !== undefined) delta.reasoning_content = c.delta.reasoning;
      if (c.delta.toolCalls) {
        delta.tool_calls = c.delta.toolCalls.map((t) => ({
          index: t.index,
          ...(t.id !== undefined && { id: t.id, type: "function" }),
          function: { ...(t.name !== undefined && { name: t.name }), ...(t.arguments !== undefined && { arguments: t.arguments }) },
        }));
      }
      return { index: c.index, delta, logprobs: c.logprobs ?? null, finish_reason: c.finishReason };
    }),
  });
  if (chunk.usage !== undefined) out.usage = chunk.usage === null ? null : usageToOpenAI(chunk.usage);
  return out;
}
