/**
 * Canonical → what an Anthropic SDK expects from `POST /v1/messages`: a `message` object, the
 * Messages SSE stream (`anthropic-stream.ts`), and Anthropic-shaped error bodies. Anthropic has
 * no `n`: only the first choice is answered.
 */
import type { AssistantMessage, ChatRequest, ChatResponse } from "../../../common/canonical/types.ts";
import type { GatewayError } from "../../../common/errors.ts";
import type { JsonObject } from "../../../common/schemas/fields.ts";
import type { ChatClient } from "../codec.ts";
import { AnthropicStreamEncoder } from "./anthropic-stream.ts";
import { anthropicErrorBody, matchedStopSequence, messageId, stopReason, toolInput, toolUseId, usageToAnthropic } from "./anthropic-wire.ts";

/**
 * The Anthropic client codec. A response's content is `[thinking?, text…, tool_use…]`: the
 * canonical message keeps no order between text and tool calls, and Anthropic models write text
 * before their calls. Reasoning becomes a `thinking` block with an empty `signature` (the backend
 * gave none; the Anthropic parser drops signatures, so the block can be sent back to Gearbox).
 * Refusal text becomes a text block and the stop reason `refusal`.
 */
export const anthropicClient: ChatClient = {
  response: (res, req) => Buffer.from(JSON.stringify(toAnthropicMessage(res, req))),
  stream: (req) => new AnthropicStreamEncoder(req),
  error: (err: GatewayError) => Buffer.from(JSON.stringify(anthropicErrorBody(err))),
};

/** A canonical response as an Anthropic `message` object. */
export function toAnthropicMessage(res: ChatResponse, req: ChatRequest): JsonObject {
  const choice = res.choices[0];
  const message: AssistantMessage = choice?.message ?? { role: "assistant", content: null };
  const content: JsonObject[] = [];
  if (message.reasoning) content.push({ type: "thinking", thinking: message.reasoning, signature: "" });
  for (const text of texts(message.content)) content.push({ type: "text", text });
  if (message.refusal) content.push({ type: "text", text: message.refusal });
  const calls = message.toolCalls ?? [];
  for (const call of calls) content.push({ type: "tool_use", id: toolUseId(call.id), name: call.name, input: toolInput(call.arguments) });
  const stopSequence = matchedStopSequence(res.extra);
  const reason = stopReason({ finishReason: choice?.finishReason ?? null, toolCalls: calls.length > 0, refusal: Boolean(message.refusal), stopSequence });
  return {
    id: messageId(res.id),
    type: "message",
    role: "assistant",
    model: res.model || req.model,
    content,
    stop_reason: reason,
    stop_sequence: reason === "stop_sequence" ? stopSequence : null,
    usage: usageToAnthropic(res.usage),
  };
}

/** The non-empty texts of assistant content, one per text block. */
function texts(content: AssistantMessage["content"]): string[] {
  if (content === null) return [];
  if (typeof content === "string") return content === "" ? [] : [content];
  return content.map((part) => part.text).filter((text) => text !== "");
}
