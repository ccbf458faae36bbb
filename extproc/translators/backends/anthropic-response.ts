/**
 * An Anthropic message (non-streaming response body) → canonical `ChatResponse`:
 *
 * - `text` blocks, joined with nothing between them (as a stream's deltas join), are the content;
 *   `null` when there is none, as OpenAI sends with tool calls.
 * - `tool_use` blocks are tool calls, `input` JSON-stringified; Gearbox's own
 *   `JSON_RESPONSE_TOOL` is the answer to `response_format` and becomes the content instead.
 * - `thinking` blocks are `reasoning` (signatures are dropped; `redacted_thinking` is skipped).
 * - Blocks of server-side tools (`server_tool_use`, `mcp_tool_use`, their results) and other
 *   block types are skipped: Anthropic ran those tools itself; the client has nothing to do.
 * - `stop_reason` → `finishReason` (`finishReasonFor`); a `refusal` also sets `refusal` to
 *   Anthropic's explanation (or a fixed sentence) so OpenAI clients see why the answer is empty.
 * - usage: see `toCanonicalUsage`. `created` is the time Gearbox read the answer (Anthropic
 *   sends none); the Anthropic-only fields are not carried in `extra`, which would put them in
 *   an OpenAI body.
 */
import type { AssistantMessage, ChatResponse, ToolCall } from "../../../common/canonical/types.ts";
import type { GatewayError } from "../../../common/errors.ts";
import { fail, ok, type Result } from "../../../common/result.ts";
import { isObject, type JsonObject } from "../../../common/schemas/fields.ts";
import { parseUpstreamJson } from "../upstream-json.ts";
import { emptyUsageCounts, finishReasonFor, JSON_RESPONSE_TOOL, malformedAnthropic, mergeUsageCounts, toCanonicalUsage } from "./anthropic-wire.ts";

/** Shown as `refusal` when Anthropic refuses without an explanation. */
export const DEFAULT_REFUSAL = "The model declined to respond (Anthropic stop_reason: refusal).";

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** The explanation of a refusal, from `stop_details` when Anthropic gives one. */
export function refusalText(stopDetails: unknown): string {
  return (isObject(stopDetails) ? str(stopDetails.explanation) : undefined) ?? DEFAULT_REFUSAL;
}

/** Parses a complete message body; a body that is not an Anthropic message is a 502. */
export function parseAnthropicMessage(body: Buffer, fallbackModel: string): Result<ChatResponse, GatewayError> {
  const parsed = parseUpstreamJson(body, "message");
  if (!parsed.ok) return parsed;
  const json = parsed.value;
  if (!isObject(json) || !Array.isArray(json.content)) return fail(malformedAnthropic("message ('content' is missing)"));
  const read = readBlocks(json.content.filter(isObject));
  const stopReason = str(json.stop_reason) ?? null;
  const message: AssistantMessage = { role: "assistant", content: read.json ?? (read.text.length > 0 ? read.text.join("") : null) };
  if (read.toolCalls.length > 0) message.toolCalls = read.toolCalls;
  if (read.reasoning.length > 0) message.reasoning = read.reasoning.join("");
  if (stopReason === "refusal") message.refusal = refusalText(json.stop_details);
  let finishReason = finishReasonFor(stopReason);
  if (finishReason === "tool_calls" && read.toolCalls.length === 0 && read.json !== undefined) finishReason = "stop";
  return ok({
    id: str(json.id) ?? "",
    created: Math.floor(Date.now() / 1000),
    model: str(json.model) ?? fallbackModel,
    choices: [{ index: 0, message, finishReason }],
    usage: toCanonicalUsage(mergeUsageCounts(emptyUsageCounts(), json.usage)),
    extra: {},
  });
}

interface ReadBlocks {
  text: string[];
  reasoning: string[];
  toolCalls: ToolCall[];
  /** The input of Gearbox's JSON answer tool, as JSON text. */
  json?: string;
}

function readBlocks(blocks: readonly JsonObject[]): ReadBlocks {
  const out: ReadBlocks = { text: [], reasoning: [], toolCalls: [] };
  for (const block of blocks) {
    if (block.type === "text" && typeof block.text === "string") out.text.push(block.text);
    else if (block.type === "thinking" && typeof block.thinking === "string") out.reasoning.push(block.thinking);
    else if (block.type === "tool_use") {
      const args = JSON.stringify(block.input ?? {});
      if (block.name === JSON_RESPONSE_TOOL) out.json = args;
      else out.toolCalls.push({ id: str(block.id) ?? "", name: str(block.name) ?? "", arguments: args });
    }
  }
  return out;
}
