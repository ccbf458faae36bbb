/**
 * Canonical chunks (OpenAI-like deltas) → Anthropic's Messages SSE stream:
 * `message_start`, then per content block `content_block_start` / `content_block_delta`… /
 * `content_block_stop`, then `message_delta` (stop reason, usage) and `message_stop`.
 */
import type { ChatChunk, ChatRequest, ChunkChoice, FinishReason, ToolCallDelta, Usage } from "../../../common/canonical/types.ts";
import type { GatewayError } from "../../../common/errors.ts";
import type { JsonObject } from "../../../common/schemas/fields.ts";
import type { ChatStreamEncoder } from "../codec.ts";
import { anthropicErrorBody, matchedStopSequence, messageId, stopReason, toolUseId, usageToAnthropic } from "./anthropic-wire.ts";

const EMPTY = Buffer.alloc(0);

type BlockKind = "text" | "thinking" | "tool_use";

/** One SSE event: `event: <type>` and its JSON, whose `type` repeats the event name. */
function sse(type: string, body: JsonObject): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...body })}\n\n`;
}

/**
 * Per-request encoder. Anthropic streams one content block at a time, each with an index: a
 * switch between reasoning, text and tool calls (or from one tool call to the next) closes the
 * open block and starts the next. Tool argument fragments go out as `input_json_delta` exactly
 * as the model produced them (the SDK joins and parses them; arguments that are not valid JSON
 * fail in the client's parser, as they would have had Anthropic sent them). A fragment for a
 * tool call whose block was already closed (a backend interleaving calls) still goes out, as a
 * delta to that call's block index, so no argument text is lost.
 *
 * `message_delta` is written by `end()`, not at the finish reason: backends send usage in a
 * chunk of its own after the finish, and the client should get the final counts.
 * Only choice 0 is encoded (Anthropic has no `n`).
 */
export class AnthropicStreamEncoder implements ChatStreamEncoder {
  private started = false;
  private open: { kind: BlockKind; index: number } | undefined;
  private nextIndex = 0;
  /** Canonical tool-call index → Anthropic block index. */
  private readonly toolBlocks = new Map<number, number>();
  private finishReason: FinishReason | null = null;
  private usage: Usage | undefined;
  private stopSequence: string | null = null;
  private refusal = false;

  constructor(private readonly req: ChatRequest) {}

  chunk(chunk: ChatChunk): Buffer {
    const out: string[] = [];
    if (chunk.usage) this.usage = chunk.usage;
    this.stopSequence = matchedStopSequence(chunk.extra) ?? this.stopSequence;
    if (!this.started) this.start(chunk.id, chunk.model, out);
    const choice = chunk.choices.find((c) => c.index === 0);
    if (choice) this.choice(choice, out);
    return out.length === 0 ? EMPTY : Buffer.from(out.join(""));
  }

  end(): Buffer {
    const out: string[] = [];
    if (!this.started) this.start("", "", out);
    this.close(out);
    const reason = stopReason({
      finishReason: this.finishReason,
      toolCalls: this.toolBlocks.size > 0,
      refusal: this.refusal,
      stopSequence: this.stopSequence,
    });
    const usage = usageToAnthropic(this.usage);
    out.push(
      sse("message_delta", {
        delta: { stop_reason: reason, stop_sequence: reason === "stop_sequence" ? this.stopSequence : null },
        // Cumulative counts; input counts too, as usage is often only known at the end.
        usage: this.usage ? usage : { output_tokens: 0 },
      }),
      sse("message_stop", {}),
    );
    return Buffer.from(out.join(""));
  }

  error(err: GatewayError): Buffer {
    return Buffer.from(`event: error\ndata: ${JSON.stringify(anthropicErrorBody(err))}\n\n`);
  }

  private start(id: string, model: string, out: string[]): void {
    this.started = true;
    const usage = usageToAnthropic(this.usage);
    out.push(
      sse("message_start", {
        message: {
          id: messageId(id),
          type: "message",
          role: "assistant",
          model: model || this.req.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: Object.assign({}, usage, { output_tokens: 0 }),
        },
      }),
    );
  }

  private choice(choice: ChunkChoice, out: string[]): void {
    const { reasoning, content, refusal, toolCalls } = choice.delta;
    if (reasoning) this.delta("thinking", { type: "thinking_delta", thinking: reasoning }, out);
    if (content) this.delta("text", { type: "text_delta", text: content }, out);
    if (refusal) {
      this.refusal = true;
      this.delta("text", { type: "text_delta", text: refusal }, out);
    }
    for (const call of toolCalls ?? []) this.toolCall(call, out);
    if (choice.finishReason) {
      this.finishReason = choice.finishReason;
      this.close(out);
    }
  }

  /** A delta for a text or thinking block, opening one if another kind is open. */
  private delta(kind: "text" | "thinking", delta: JsonObject, out: string[]): void {
    const index =
      this.open?.kind === kind
        ? this.open.index
        : this.begin(kind, kind === "text" ? { type: "text", text: "" } : { type: "thinking", thinking: "", signature: "" }, out);
    out.push(sse("content_block_delta", { index, delta }));
  }

  private toolCall(call: ToolCallDelta, out: string[]): void {
    let index = this.toolBlocks.get(call.index);
    if (index === undefined) {
      index = this.begin("tool_use", { type: "tool_use", id: toolUseId(call.id), name: call.name ?? "", input: {} }, out);
      this.toolBlocks.set(call.index, index);
    }
    if (call.arguments) out.push(sse("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: call.arguments } }));
  }

  /** Closes the open block and starts a new one; returns its index. */
  private begin(kind: BlockKind, block: JsonObject, out: string[]): number {
    this.close(out);
    const index = this.nextIndex++;
    this.open = { kind, index };
    out.push(sse("content_block_start", { index, content_block: block }));
    return index;
  }

  private close(out: string[]): void {
    if (!this.open) return;
    out.push(sse("content_block_stop", { index: this.open.index }));
    this.open = undefined;
  }
}
