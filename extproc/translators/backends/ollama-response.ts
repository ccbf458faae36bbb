/**
 * Ollama `/api/chat` objects → canonical. A non-streaming response and each line of a stream
 * have the same shape (`{model, created_at, message: {role, content, thinking?, tool_calls?},
 * done, done_reason?, prompt_eval_count?, eval_count?, logprobs?, …}`), so both are read by
 * `readOllamaChatObject`. Reading is lenient about what the docs show as optional (older
 * servers send no `done_reason`; a final stream line may have no `message`) and strict about
 * types. Ollama's Go structs omit zero counts (`omitempty`), so a missing count is 0.
 */
import { randomBytes } from "node:crypto";
import type { AssistantMessage, ChatResponse, FinishReason, ToolCall, Usage } from "../../../common/canonical/types.ts";
import { GatewayError } from "../../../common/errors.ts";
import { fail, ok, type Result } from "../../../common/result.ts";
import { isObject, type JsonObject } from "../../../common/schemas/fields.ts";
import { malformedOllama, ollamaErrorMessage } from "./ollama-errors.ts";

/** A tool call as Ollama reports it, arguments already JSON text. */
export interface OllamaCall {
  /** Newer servers send one (`call_…`); older ones and the docs' examples do not. */
  id?: string;
  name: string;
  arguments: string;
}

/** One `/api/chat` object, read. */
export interface OllamaChatObject {
  model: string;
  /** `created_at` in Unix seconds, when it parses. */
  created?: number;
  content: string;
  thinking: string;
  toolCalls: OllamaCall[];
  done: boolean;
  doneReason?: string;
  usage: Usage;
  /** OpenAI-shaped (`{content: [...]}`), when Ollama sent log probabilities. */
  logprobs?: JsonObject;
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const count = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);

/** A fresh OpenAI-style id for a response or stream (Ollama's responses carry none). */
export function newOllamaResponseId(): string {
  return `chatcmpl-${randomBytes(12).toString("hex")}`;
}

/** The current time in Unix seconds, for objects whose `created_at` does not parse. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** Reads one object; `fail` says which field is wrong. Error objects are the caller's to check first. */
export function readOllamaChatObject(json: unknown): Result<OllamaChatObject> {
  if (!isObject(json)) return fail("not a JSON object");
  const message = json.message ?? {};
  if (!isObject(message)) return fail("'message' is not an object");
  if (json.done !== undefined && typeof json.done !== "boolean") return fail("'done' is not a boolean");
  if (message.content !== undefined && message.content !== null && typeof message.content !== "string") return fail("'message.content' is not a string");
  const toolCalls = readToolCalls(message.tool_calls);
  if (!toolCalls.ok) return toolCalls;
  const input = count(json.prompt_eval_count);
  const output = count(json.eval_count);
  const object: OllamaChatObject = {
    model: str(json.model) ?? "",
    content: str(message.content) ?? "",
    thinking: str(message.thinking) ?? "",
    toolCalls: toolCalls.value,
    done: json.done === true,
    usage: { inputTokens: input, outputTokens: output, totalTokens: input + output },
  };
  const created = typeof json.created_at === "string" ? Date.parse(json.created_at) : NaN;
  if (Number.isFinite(created)) object.created = Math.floor(created / 1000);
  const doneReason = str(json.done_reason);
  if (doneReason !== undefined) object.doneReason = doneReason;
  const logprobs = toOpenAILogprobs(json.logprobs);
  if (logprobs) object.logprobs = logprobs;
  return ok(object);
}

function readToolCalls(raw: unknown): Result<OllamaCall[]> {
  if (raw === undefined || raw === null) return ok([]);
  if (!Array.isArray(raw)) return fail("'message.tool_calls' is not an array");
  const calls: OllamaCall[] = [];
  for (const entry of raw) {
    const fn = isObject(entry) ? entry.function : undefined;
    if (!isObject(entry) || !isObject(fn) || typeof fn.name !== "string") return fail("a tool call has no 'function.name'");
    const args = fn.arguments;
    const call: OllamaCall = {
      name: fn.name,
      arguments: typeof args === "string" ? args : args === undefined || args === null ? "{}" : JSON.stringify(args),
    };
    if (typeof entry.id === "string" && entry.id !== "") call.id = entry.id;
    calls.push(call);
  }
  return ok(calls);
}

/** Ollama's `[{token, logprob, bytes?, top_logprobs?}]` → OpenAI's `{content: [...]}` (the canonical shape). */
export function toOpenAILogprobs(raw: unknown): JsonObject | undefined {
  if (!Array.isArray(raw) || raw.length === 0) return undefined;
  const token = (e: JsonObject): JsonObject => ({
    token: str(e.token) ?? "",
    logprob: typeof e.logprob === "number" ? e.logprob : 0,
    bytes: Array.isArray(e.bytes) ? e.bytes : null,
  });
  return {
    content: raw
      .filter(isObject)
      .map((e) => Object.assign({}, token(e), { top_logprobs: Array.isArray(e.top_logprobs) ? e.top_logprobs.filter(isObject).map(token) : [] })),
  };
}

/**
 * `done_reason` → canonical: `length` stays, everything else (`stop`, none from older servers,
 * `load`/`unload`, reasons Gearbox does not know yet) is a normal stop, `tool_calls` when the
 * answer called tools.
 */
export function ollamaFinishReason(doneReason: string | undefined, calledTools: boolean): FinishReason {
  if (doneReason === "length") return "length";
  return calledTools ? "tool_calls" : "stop";
}

/** Canonical calls; Ollama's id when it sent one, else `call_<index>` (`index` counts calls in the answer). */
export function toCanonicalCall(call: OllamaCall, index: number): ToolCall {
  return { id: call.id ?? `call_${index}`, name: call.name, arguments: call.arguments };
}

/** A complete (non-streaming) `/api/chat` body, parsed, → canonical; anything else is a 502. */
export function parseOllamaChatResponse(json: unknown, id: string): Result<ChatResponse, GatewayError> {
  const upstreamMessage = ollamaErrorMessage(json);
  if (upstreamMessage !== undefined) return fail(new GatewayError(502, "upstream_error", upstreamMessage, { code: "upstream_error" }));
  const read = readOllamaChatObject(json);
  if (!read.ok) return fail(malformedOllama(`chat response (${read.errors.join("; ")})`));
  const object = read.value;
  if (!object.done) return fail(malformedOllama("chat response ('done' is not true)"));
  const toolCalls = object.toolCalls.map(toCanonicalCall);
  const message: AssistantMessage = { role: "assistant", content: object.content === "" && toolCalls.length > 0 ? null : object.content };
  if (object.thinking !== "") message.reasoning = object.thinking;
  if (toolCalls.length > 0) message.toolCalls = toolCalls;
  const finishReason = ollamaFinishReason(object.doneReason, toolCalls.length > 0);
  const choice = object.logprobs ? { index: 0, message, finishReason, logprobs: object.logprobs } : { index: 0, message, finishReason };
  return ok({ id, created: object.created ?? nowSeconds(), model: object.model, choices: [choice], usage: object.usage, extra: {} });
}
