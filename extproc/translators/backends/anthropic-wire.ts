/**
 * The Anthropic Messages API on the wire (`POST /v1/messages`, version `2023-06-01`): the request
 * shapes Gearbox writes, the stop reasons and usage it reads back, and the malformed-upstream
 * error. Responses are read leniently (Anthropic adds block and event types over time), so only
 * the request side is typed in full.
 */
import type { FinishReason, Usage } from "../../../common/canonical/types.ts";
import type { GatewayError } from "../../../common/errors.ts";
import { isObject } from "../../../common/schemas/fields.ts";
import { upstreamMalformed } from "../upstream-json.ts";

/** The `anthropic-version` header Gearbox speaks. */
export const ANTHROPIC_VERSION = "2023-06-01";

/** Path below the provider base path (`https://api.anthropic.com/v1`). */
export const ANTHROPIC_MESSAGES_PATH = "/messages";

/**
 * The tool Gearbox adds to carry `response_format` JSON (see `anthropic-request.ts`). Its
 * `tool_use` comes back as message content, never as a tool call; clients may not define a tool
 * of this name.
 */
export const JSON_RESPONSE_TOOL = "gearbox_json_response";

/** A text content block. */
export interface AnthropicTextBlock {
  type: "text";
  text: string;
}

/** Where an image comes from: a URL Anthropic fetches, or inline base64. */
export type AnthropicImageSource = { type: "url"; url: string } | { type: "base64"; media_type: string; data: string };

/** An image in a user turn. */
export interface AnthropicImageBlock {
  type: "image";
  source: AnthropicImageSource;
}

/** A document's content: a base64 PDF, or plain text. */
export type AnthropicDocumentSource =
  { type: "base64"; media_type: "application/pdf"; data: string } | { type: "text"; media_type: "text/plain"; data: string };

/** A document in a user turn (what OpenAI `file` parts become). */
export interface AnthropicDocumentBlock {
  type: "document";
  source: AnthropicDocumentSource;
  title?: string;
}

/** A tool call in an assistant turn; `input` is always a JSON object. */
export interface AnthropicToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** A tool's result, in the user turn after the call. */
export interface AnthropicToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content?: string | AnthropicTextBlock[];
}

/** The blocks Gearbox puts in a user turn. */
export type AnthropicUserBlock = AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock | AnthropicToolResultBlock;
/** The blocks Gearbox puts in an assistant turn. */
export type AnthropicAssistantBlock = AnthropicTextBlock | AnthropicToolUseBlock;

/** One turn of `messages`; roles alternate. */
export type AnthropicMessage = { role: "user"; content: string | AnthropicUserBlock[] } | { role: "assistant"; content: string | AnthropicAssistantBlock[] };

/** A client tool definition. */
export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  /** Structured outputs: the tool's input is constrained to `input_schema`. */
  strict?: boolean;
}

/** Extended thinking: `budget_tokens` (at least `ANTHROPIC_MIN_THINKING_BUDGET`) is part of `max_tokens`. */
export type AnthropicThinking = { type: "enabled"; budget_tokens: number } | { type: "disabled" };

/** How the model may use tools; `disable_parallel_tool_use` asks for at most one call. */
export type AnthropicToolChoice =
  | { type: "auto"; disable_parallel_tool_use?: boolean }
  | { type: "any"; disable_parallel_tool_use?: boolean }
  | { type: "tool"; name: string; disable_parallel_tool_use?: boolean }
  | { type: "none" };

/** The `POST /v1/messages` body Gearbox sends. */
export interface AnthropicRequestBody {
  model: string;
  max_tokens: number;
  system?: string | AnthropicTextBlock[];
  messages: AnthropicMessage[];
  temperature?: number;
  top_p?: number;
  stop_sequences?: string[];
  stream?: boolean;
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  metadata?: { user_id: string };
  thinking?: AnthropicThinking;
}

/** The stop reasons Anthropic documents. */
export type AnthropicStopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" | "pause_turn" | "refusal" | "model_context_window_exceeded";

const STOP_REASONS: ReadonlySet<string> = new Set<AnthropicStopReason>([
  "end_turn",
  "max_tokens",
  "stop_sequence",
  "tool_use",
  "pause_turn",
  "refusal",
  "model_context_window_exceeded",
]);

/**
 * Anthropic `stop_reason` → OpenAI `finish_reason`. `pause_turn` (a server tool loop paused; the
 * client may send the turn back to continue) reads as `stop`, as does a reason Anthropic adds
 * later: the answer did end, and failing a finished answer over its label helps nobody.
 * `null` (not known yet) stays `null`.
 */
export function finishReasonFor(stopReason: string | null): FinishReason | null {
  if (stopReason === null) return null;
  if (!STOP_REASONS.has(stopReason)) return "stop";
  const known = stopReason as AnthropicStopReason;
  switch (known) {
    case "end_turn":
    case "stop_sequence":
    case "pause_turn":
      return "stop";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "tool_use":
      return "tool_calls";
    case "refusal":
      return "content_filter";
    default: {
      const never: never = known;
      throw new Error(`Unhandled Anthropic stop reason: ${String(never)}`);
    }
  }
}

/** Anthropic's token counts as sent; a stream's `message_delta` overrides what `message_start` said. */
export interface AnthropicUsageCounts {
  input: number;
  output: number;
  cacheRead: number;
  cacheCreation: number;
  thinking?: number;
}

/** All counts zero, before any usage arrived. */
export function emptyUsageCounts(): AnthropicUsageCounts {
  return { input: 0, output: 0, cacheRead: 0, cacheCreation: 0 };
}

const count = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/** Copies the counts present in an Anthropic `usage` object over `into` (absent ones are kept). */
export function mergeUsageCounts(into: AnthropicUsageCounts, raw: unknown): AnthropicUsageCounts {
  if (!isObject(raw)) return into;
  into.input = count(raw.input_tokens) ?? into.input;
  into.output = count(raw.output_tokens) ?? into.output;
  into.cacheRead = count(raw.cache_read_input_tokens) ?? into.cacheRead;
  into.cacheCreation = count(raw.cache_creation_input_tokens) ?? into.cacheCreation;
  const thinking = isObject(raw.output_tokens_details) ? count(raw.output_tokens_details.thinking_tokens) : undefined;
  if (thinking !== undefined) into.thinking = thinking;
  return into;
}

/**
 * Canonical usage. Anthropic's `input_tokens` excludes cached tokens, so the prompt's size is
 * `input + cache_read + cache_creation` (OpenAI's `prompt_tokens` counts cached tokens too);
 * `cachedInputTokens` is the cache reads. Thinking tokens are part of `output_tokens`, as
 * OpenAI's reasoning tokens are part of `completion_tokens`.
 */
export function toCanonicalUsage(c: AnthropicUsageCounts): Usage {
  const inputTokens = c.input + c.cacheRead + c.cacheCreation;
  const usage: Usage = { inputTokens, outputTokens: c.output, totalTokens: inputTokens + c.output, cachedInputTokens: c.cacheRead };
  if (c.thinking !== undefined) usage.reasoningTokens = c.thinking;
  return usage;
}

/** A 502 for an Anthropic body or event that is not what the API promises. */
export function malformedAnthropic(what: string, cause?: unknown): GatewayError {
  return upstreamMalformed(`The upstream sent a malformed ${what}.`, cause);
}
