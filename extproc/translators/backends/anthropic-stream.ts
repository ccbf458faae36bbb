/**
 * Anthropic Messages SSE → canonical chunks in OpenAI terms, one chunk per content event:
 *
 * - `message_start` → a first chunk with `role: "assistant"` and empty content. A repeated
 *   `message_start` of the same message is ignored; one of another message while the first is
 *   open (a spliced stream) is a 502. Blocks already in `message.content` are emitted whole.
 * - `text_delta` → `content`; `thinking_delta` → `reasoning`; `signature_delta`,
 *   `citations_delta` and unknown deltas are dropped.
 * - A `tool_use` block → a tool-call delta with `index` = the running tool-call count (not
 *   Anthropic's block index, which also counts text and thinking blocks), `id`, `name` and
 *   empty arguments; its `input_json_delta`s → argument deltas on that index. A tool call that
 *   got no argument text (Anthropic sends `""` for `{}`, or the input whole in the start event)
 *   gets its input as JSON at `content_block_stop`, so arguments always parse.
 * - Gearbox's `JSON_RESPONSE_TOOL` block streams as `content` (the `response_format` answer).
 * - Server-side tool blocks and unknown block types are skipped, as in `anthropic-response.ts`.
 * - `message_delta` → a chunk with `finishReason` (and `refusal` for a refusal);
 *   `message_stop` → a last chunk with `usage` and no choices. That usage chunk is always sent:
 *   Anthropic always reports usage, and the client codec drops it for clients that did not ask
 *   (`stream_options.include_usage`), so `forceStreamUsage` changes nothing here.
 * - `ping` and unknown event types are ignored (Anthropic may add event types); an `error`
 *   event throws its `GatewayError` (`anthropicStreamError`); invalid JSON, a delta for a block
 *   never started, or an event after `message_stop` throws a 502; `end()` before `message_stop`
 *   or with an unterminated event buffered throws a 502 ("upstream stream ended early").
 */
import type { ChatChunk, ChunkChoice, FinishReason } from "../../../common/canonical/types.ts";
import { GatewayError } from "../../../common/errors.ts";
import { isObject, type JsonObject } from "../../../common/schemas/fields.ts";
import { SseParser } from "../../../common/schemas/sse.ts";
import type { BackendContext, ChatStreamDecoder } from "../codec.ts";
import { anthropicStreamError } from "./anthropic-error.ts";
import { refusalText } from "./anthropic-response.ts";
import { parseUpstreamJson } from "../upstream-json.ts";
import { emptyUsageCounts, finishReasonFor, JSON_RESPONSE_TOOL, malformedAnthropic, mergeUsageCounts, toCanonicalUsage } from "./anthropic-wire.ts";

type Delta = ChunkChoice["delta"];

/** What Gearbox does with one content block's deltas. */
type Block =
  | { kind: "text" }
  | { kind: "thinking" }
  | { kind: "tool"; toolIndex: number; input: unknown; streamed: boolean }
  | { kind: "json"; input: unknown; streamed: boolean }
  | { kind: "skipped" };

function endedEarly(why: string): GatewayError {
  return new GatewayError(502, "upstream_error", `The upstream stream ended early (${why}).`, { code: "upstream_stream_truncated" });
}

/** One decoder per upstream stream. */
export class AnthropicStreamDecoder implements ChatStreamDecoder {
  private readonly parser = new SseParser();
  private phase: "waiting" | "open" | "done" = "waiting";
  private id = "";
  private model: string;
  private readonly created = Math.floor(Date.now() / 1000);
  private readonly blocks = new Map<number, Block>();
  private toolCalls = 0;
  private jsonAnswer = false;
  private stopReason: string | null = null;
  private stopDetails: unknown;
  private finished = false;
  private readonly usage = emptyUsageCounts();

  constructor(ctx: BackendContext) {
    this.model = ctx.upstreamModel;
  }

  push(chunk: Buffer): ChatChunk[] {
    const out: ChatChunk[] = [];
    for (const event of this.parser.push(chunk)) this.handle(event.data, out);
    return out;
  }

  end(): ChatChunk[] {
    if (this.parser.flush().length > 0) throw endedEarly("inside an event");
    if (this.phase !== "done") throw endedEarly(this.phase === "waiting" ? "before message_start" : "before message_stop");
    return [];
  }

  private handle(data: string, out: ChatChunk[]): void {
    if (data === "") return;
    const parsed = parseUpstreamJson(data, "stream event");
    if (!parsed.ok) throw parsed.errors[0];
    const json = parsed.value;
    if (!isObject(json) || typeof json.type !== "string") throw malformedAnthropic("stream event (no 'type')");
    if (json.type === "ping") return;
    if (json.type === "error") throw anthropicStreamError(json);
    if (this.phase === "done") throw malformedAnthropic(`stream ('${json.type}' after message_stop)`);
    if (json.type === "message_start") return this.start(json, out);
    if (this.phase === "waiting") throw malformedAnthropic(`stream ('${json.type}' before message_start)`);
    switch (json.type) {
      case "content_block_start":
        return this.blockStart(blockIndex(json), isObject(json.content_block) ? json.content_block : {}, out);
      case "content_block_delta":
        return this.blockDelta(blockIndex(json), isObject(json.delta) ? json.delta : {}, out);
      case "content_block_stop":
        return this.blockStop(blockIndex(json), out);
      case "message_delta":
        return this.messageDelta(json, out);
      case "message_stop":
        return this.stop(out);
      default:
        return; // an event type Anthropic added after this code: nothing Gearbox needs
    }
  }

  private start(json: JsonObject, out: ChatChunk[]): void {
    const message = isObject(json.message) ? json.message : {};
    const id = typeof message.id === "string" ? message.id : "";
    if (this.phase === "open") {
      if (id === this.id) return;
      throw malformedAnthropic(`stream (message '${id}' started inside message '${this.id}')`);
    }
    this.phase = "open";
    this.id = id;
    if (typeof message.model === "string") this.model = message.model;
    mergeUsageCounts(this.usage, message.usage);
    if (typeof message.stop_reason === "string") this.stopReason = message.stop_reason;
    out.push(this.chunk({ role: "assistant", content: "" }));
    const content = Array.isArray(message.content) ? message.content.filter(isObject) : [];
    content.forEach((block, i) => {
      this.blockStart(-1 - i, block, out);
      this.blockStop(-1 - i, out);
    });
  }

  private blockStart(index: number, block: JsonObject, out: ChatChunk[]): void {
    switch (block.type) {
      case "text":
        this.blocks.set(index, { kind: "text" });
        if (typeof block.text === "string" && block.text !== "") out.push(this.chunk({ content: block.text }));
        return;
      case "thinking":
        this.blocks.set(index, { kind: "thinking" });
        if (typeof block.thinking === "string" && block.thinking !== "") out.push(this.chunk({ reasoning: block.thinking }));
        return;
      case "tool_use": {
        if (block.name === JSON_RESPONSE_TOOL) {
          this.jsonAnswer = true;
          this.blocks.set(index, { kind: "json", input: block.input, streamed: false });
          return;
        }
        const toolIndex = this.toolCalls++;
        this.blocks.set(index, { kind: "tool", toolIndex, input: block.input, streamed: false });
        const id = typeof block.id === "string" ? block.id : "";
        const name = typeof block.name === "string" ? block.name : "";
        out.push(this.chunk({ toolCalls: [{ index: toolIndex, id, name, arguments: "" }] }));
        return;
      }
      default:
        this.blocks.set(index, { kind: "skipped" });
    }
  }

  private blockDelta(index: number, delta: JsonObject, out: ChatChunk[]): void {
    const block = this.blocks.get(index);
    if (block === undefined) throw malformedAnthropic(`stream (delta for content block ${index}, which was not started)`);
    const text = (key: string): string => (typeof delta[key] === "string" ? delta[key] : "");
    switch (block.kind) {
      case "text":
        if (delta.type === "text_delta" && text("text") !== "") out.push(this.chunk({ content: text("text") }));
        return;
      case "thinking":
        if (delta.type === "thinking_delta" && text("thinking") !== "") out.push(this.chunk({ reasoning: text("thinking") }));
        return;
      case "tool":
      case "json": {
        const part = delta.type === "input_json_delta" ? text("partial_json") : "";
        if (part === "") return;
        block.streamed = true;
        out.push(this.chunk(block.kind === "json" ? { content: part } : { toolCalls: [{ index: block.toolIndex, arguments: part }] }));
        return;
      }
      case "skipped":
        return;
      default: {
        const never: never = block;
        throw new Error(`Unhandled block kind: ${JSON.stringify(never)}`);
      }
    }
  }

  private blockStop(index: number, out: ChatChunk[]): void {
    const block = this.blocks.get(index);
    if (block === undefined) throw malformedAnthropic(`stream (stop of content block ${index}, which was not started)`);
    this.blocks.delete(index);
    if ((block.kind === "tool" || block.kind === "json") && !block.streamed) {
      const whole = JSON.stringify(block.input ?? {});
      out.push(this.chunk(block.kind === "json" ? { content: whole } : { toolCalls: [{ index: block.toolIndex, arguments: whole }] }));
    }
  }

  private messageDelta(json: JsonObject, out: ChatChunk[]): void {
    mergeUsageCounts(this.usage, json.usage);
    const delta = isObject(json.delta) ? json.delta : {};
    if (typeof delta.stop_reason === "string") this.stopReason = delta.stop_reason;
    if (delta.stop_details !== undefined) this.stopDetails = delta.stop_details;
    if (this.stopReason !== null && !this.finished) out.push(this.finish());
  }

  private stop(out: ChatChunk[]): void {
    if (!this.finished) out.push(this.finish());
    this.phase = "done";
    out.push({ id: this.id, created: this.created, model: this.model, choices: [], usage: toCanonicalUsage(this.usage), extra: {} });
  }

  /** The finish chunk; a stream that never said why it stopped finishes as `stop`. */
  private finish(): ChatChunk {
    this.finished = true;
    let reason: FinishReason = finishReasonFor(this.stopReason) ?? "stop";
    if (reason === "tool_calls" && this.toolCalls === 0 && this.jsonAnswer) reason = "stop";
    const delta: Delta = this.stopReason === "refusal" ? { refusal: refusalText(this.stopDetails) } : {};
    return this.chunk(delta, reason);
  }

  private chunk(delta: Delta, finishReason: FinishReason | null = null): ChatChunk {
    return { id: this.id, created: this.created, model: this.model, choices: [{ index: 0, delta, finishReason }], extra: {} };
  }
}

function blockIndex(json: JsonObject): number {
  if (typeof json.index !== "number" || !Number.isInteger(json.index) || json.index < 0) {
    throw malformedAnthropic(`stream event ('${String(json.type)}' without a block index)`);
  }
  return json.index;
}
