/**
 * What an Anthropic SDK reads, built from canonical values: stop reasons, usage, ids, tool
 * inputs and error bodies. Shared by the response encoder (`anthropic.ts`) and the stream
 * encoder (`anthropic-stream.ts`).
 */
import { randomBytes } from "node:crypto";
import type { FinishReason, Usage } from "../../../common/canonical/types.ts";
import { unreachable, type GatewayError } from "../../../common/errors.ts";
import { isObject, type JsonObject } from "../../../common/schemas/fields.ts";

/** The stop reasons Gearbox can produce from a canonical finish reason. */
export type AnthropicStopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" | "refusal";

/** What the end of a message looked like, as far as the canonical model tells. */
export interface StopFacts {
  finishReason: FinishReason | null;
  /** The message carries at least one tool call. */
  toolCalls: boolean;
  /** The message carries refusal text. */
  refusal: boolean;
  /** The stop sequence that ended generation, when the backend said which. */
  stopSequence: string | null;
}

/**
 * Canonical finish reason → Anthropic `stop_reason`. Tool calls decide over the label: SDK tool
 * loops continue only on `tool_use`, and some backends finish a tool-calling turn with `stop`;
 * a `tool_calls` finish without any call reads as `end_turn`. A missing finish reason (the
 * backend never said) reads like `stop`.
 */
export function stopReason(facts: StopFacts): AnthropicStopReason {
  switch (facts.finishReason) {
    case null:
    case "stop":
      if (facts.toolCalls) return "tool_use";
      if (facts.refusal) return "refusal";
      return facts.stopSequence !== null ? "stop_sequence" : "end_turn";
    case "length":
      return "max_tokens";
    case "tool_calls":
    case "function_call":
      return facts.toolCalls ? "tool_use" : "end_turn";
    case "content_filter":
      return "refusal";
    default:
      return unreachable(facts.finishReason, "finish reason");
  }
}

/**
 * The matched stop sequence, when a backend put it in `extra.stop_sequence` (the canonical
 * model has no field for it; OpenAI-style backends never say, so their stops read `end_turn`).
 */
export function matchedStopSequence(extra: Record<string, unknown>): string | null {
  return typeof extra.stop_sequence === "string" ? extra.stop_sequence : null;
}

/** Anthropic's `usage` as Gearbox writes it. */
export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
}

/**
 * Canonical usage → Anthropic's. Canonical `inputTokens` counts cached tokens (as OpenAI's
 * `prompt_tokens` does); Anthropic's `input_tokens` does not, so cache reads are moved to
 * `cache_read_input_tokens`. Cache writes are not modelled and stay inside `input_tokens`.
 */
export function usageToAnthropic(usage: Usage | null | undefined): AnthropicUsage {
  if (!usage) return { input_tokens: 0, output_tokens: 0 };
  const cached = usage.cachedInputTokens;
  const out: AnthropicUsage = { input_tokens: Math.max(0, usage.inputTokens - (cached ?? 0)), output_tokens: usage.outputTokens };
  if (cached !== undefined) out.cache_read_input_tokens = cached;
  return out;
}

function randomId(prefix: string): string {
  return prefix + randomBytes(12).toString("hex");
}

/** A message id as Anthropic writes them: the backend's id with `msg_` in front, or a new one. */
export function messageId(id: string): string {
  if (id === "") return randomId("msg_");
  return id.startsWith("msg_") ? id : `msg_${id}`;
}

/** A tool call's id, kept as the backend made it (the client echoes it in `tool_result`), or a new one. */
export function toolUseId(id: string | undefined): string {
  return id ? id : randomId("toolu_");
}

/**
 * A tool call's JSON arguments → the `input` object of a `tool_use` block. Anthropic promises an
 * object, so arguments that are empty, not valid JSON, or JSON but not an object (a model's
 * malformed output) become `{}`: the client's tool then runs without arguments and reports what
 * is missing, which the model can correct; the raw text is not forwarded.
 */
export function toolInput(args: string): JsonObject {
  if (args.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return {}; // invalid JSON from the model: documented fallback above
  }
  return isObject(parsed) ? parsed : {};
}

/** Anthropic's error `type` values. */
export type AnthropicErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "billing_error"
  | "permission_error"
  | "not_found_error"
  | "request_too_large"
  | "rate_limit_error"
  | "timeout_error"
  | "api_error"
  | "overloaded_error";

const TYPE_BY_STATUS: Readonly<Record<number, AnthropicErrorType>> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  503: "overloaded_error",
  504: "timeout_error",
  529: "overloaded_error",
};

/**
 * The Anthropic error type for a gateway error. The status decides where Anthropic documents
 * one (a 413 is `request_too_large` whatever Gearbox called it); otherwise the gateway's type
 * does, and what has no Anthropic name is `invalid_request_error` (4xx) or `api_error` (5xx).
 */
export function anthropicErrorType(err: GatewayError): AnthropicErrorType {
  const byStatus = TYPE_BY_STATUS[err.status];
  if (byStatus) return byStatus;
  switch (err.type) {
    case "invalid_request_error":
    case "authentication_error":
    case "permission_error":
    case "not_found_error":
    case "rate_limit_error":
    case "timeout_error":
      return err.type;
    case "server_error":
    case "upstream_error":
      return err.status >= 400 && err.status < 500 ? "invalid_request_error" : "api_error";
    default:
      return unreachable(err.type, "error type");
  }
}

/**
 * Anthropic's error body: `{"type":"error","error":{"type","message"}}`, with Gearbox's `code`
 * (`json_too_deep`, `runaway_request_loop`, `upstream_unreachable`…) and `param` beside them when
 * the error has them — where an OpenAI caller reads them, `error.code` and `error.param`; fields
 * Anthropic's SDKs do not know are kept and ignored.
 */
export interface AnthropicErrorBody {
  type: "error";
  error: { type: AnthropicErrorType; message: string; code?: string; param?: string };
}

export function anthropicErrorBody(err: GatewayError): AnthropicErrorBody {
  const error: AnthropicErrorBody["error"] = { type: anthropicErrorType(err), message: err.message };
  if (err.code !== null) error.code = err.code;
  if (err.param !== null) error.param = err.param;
  return { type: "error", error };
}
