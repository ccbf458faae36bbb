/**
 * The assistant message a client got, read back from the bytes Gearbox sent it — a JSON answer
 * or an SSE stream, in the client's schema (OpenAI chat completions or Anthropic messages) — so
 * the conversation store keeps exactly what the client saw: text, and tool calls with their
 * arguments. A stream that did not end cleanly, or an answer that is not a completion, yields
 * nothing (the exchange is not stored).
 */
import type { AssistantMessage, ToolCall } from "../../common/canonical/types.ts";
import { isObject, type JsonObject } from "../../common/schemas/fields.ts";
import { SseParser } from "../../common/schemas/sse.ts";

export type AnswerSchema = "openai" | "anthropic";

interface CallSoFar {
  id: string;
  name: string;
  arguments: string;
}

export class AnswerReader {
  private readonly sse = new SseParser();
  private streamed = false;
  private text = "";
  private readonly calls = new Map<number, CallSoFar>();
  private ended = false;
  private broken = false;
  private whole: AssistantMessage | undefined;

  constructor(private readonly schema: AnswerSchema) {}

  /** A complete JSON answer. */
  json(body: Buffer): void {
    let json: unknown;
    try {
      json = JSON.parse(body.toString("utf8"));
    } catch {
      return;
    }
    this.whole = this.schema === "openai" ? fromOpenAI(json) : fromAnthropic(json);
  }

  /** A chunk of an SSE answer. */
  chunk(bytes: Buffer): void {
    this.streamed = true;
    if (this.broken) return;
    for (const event of this.sse.push(bytes)) this.take(event.data);
  }

  /** The answer as a message; undefined when there is none worth storing. */
  message(): AssistantMessage | undefined {
    if (!this.streamed) return this.whole;
    for (const event of this.sse.flush()) this.take(event.data);
    if (this.broken || !this.ended) return undefined;
    return assistant(
      this.text,
      [...this.calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => c),
    );
  }

  private take(data: string): void {
    if (this.broken) return;
    if (data === "[DONE]") {
      this.ended = true;
      return;
    }
    let event: unknown;
    try {
      event = JSON.parse(data) as unknown;
    } catch {
      this.broken = true;
      return;
    }
    if (!isObject(event)) return;
    if (this.schema === "openai") this.openAIChunk(event);
    else this.anthropicEvent(event);
  }

  private openAIChunk(chunk: JsonObject): void {
    if (isObject(chunk.error)) this.broken = true;
    const choices: unknown[] = Array.isArray(chunk.choices) ? (chunk.choices as unknown[]) : [];
    const choice = choices.find((c) => isObject(c) && (c.index ?? 0) === 0);
    if (!isObject(choice)) return;
    if (choice.finish_reason !== undefined && choice.finish_reason !== null) this.ended = true;
    const delta = choice.delta;
    if (!isObject(delta)) return;
    if (typeof delta.content === "string") this.text += delta.content;
    if (Array.isArray(delta.tool_calls))
      for (const raw of delta.tool_calls) {
        if (!isObject(raw)) continue;
        const index = typeof raw.index === "number" ? raw.index : 0;
        const call = this.calls.get(index) ?? { id: "", name: "", arguments: "" };
        if (typeof raw.id === "string") call.id = raw.id;
        const fn = raw.function;
        if (isObject(fn)) {
          if (typeof fn.name === "string") call.name += fn.name;
          if (typeof fn.arguments === "string") call.arguments += fn.arguments;
        }
        this.calls.set(index, call);
      }
  }

  private anthropicEvent(event: JsonObject): void {
    const index = typeof event.index === "number" ? event.index : 0;
    switch (event.type) {
      case "content_block_start": {
        const block = event.content_block;
        if (isObject(block) && block.type === "tool_use") this.calls.set(index, { id: str(block.id), name: str(block.name), arguments: "" });
        if (isObject(block) && block.type === "text" && typeof block.text === "string") this.text += block.text;
        return;
      }
      case "content_block_delta": {
        const delta = event.delta;
        if (!isObject(delta)) return;
        if (delta.type === "text_delta" && typeof delta.text === "string") this.text += delta.text;
        const call = this.calls.get(index);
        if (delta.type === "input_json_delta" && call && typeof delta.partial_json === "string") call.arguments += delta.partial_json;
        return;
      }
      case "message_stop":
        this.ended = true;
        return;
      case "error":
        this.broken = true;
        return;
      default:
        return;
    }
  }
}

/** A string field, or "" when absent or of another type. */
function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function assistant(text: string, calls: readonly CallSoFar[]): AssistantMessage {
  const toolCalls: ToolCall[] = calls.filter((c) => c.name !== "").map((c) => ({ id: c.id, name: c.name, arguments: c.arguments === "" ? "{}" : c.arguments }));
  return { role: "assistant", content: text === "" && toolCalls.length > 0 ? null : text, ...(toolCalls.length > 0 && { toolCalls }) };
}

function fromOpenAI(json: unknown): AssistantMessage | undefined {
  if (!isObject(json) || !Array.isArray(json.choices)) return undefined;
  const message = isObject(json.choices[0]) ? json.choices[0].message : undefined;
  if (!isObject(message)) return undefined;
  const calls = Array.isArray(message.tool_calls)
    ? message.tool_calls.filter(isObject).map((c) => {
        const fn = isObject(c.function) ? c.function : {};
        return { id: str(c.id), name: str(fn.name), arguments: str(fn.arguments) };
      })
    : [];
  return assistant(typeof message.content === "string" ? message.content : "", calls);
}

function fromAnthropic(json: unknown): AssistantMessage | undefined {
  if (!isObject(json) || json.type !== "message" || !Array.isArray(json.content)) return undefined;
  let text = "";
  const calls: CallSoFar[] = [];
  for (const block of json.content) {
    if (!isObject(block)) continue;
    if (block.type === "text" && typeof block.text === "string") text += block.text;
    if (block.type === "tool_use") calls.push({ id: str(block.id), name: str(block.name), arguments: JSON.stringify(block.input ?? {}) });
  }
  return assistant(text, calls);
}
