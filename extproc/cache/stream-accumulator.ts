/**
 * Rebuilds a chat completion from the OpenAI SSE stream Gearbox sent a client, so a streamed
 * answer can be cached. Only a clean, plain-text stream yields one: it must end with `[DONE]`,
 * every choice must have a `finish_reason`, and no chunk may carry an error, tool calls, a
 * function call, a refusal or logprobs (those streams are not cached).
 */
import { isObject, type JsonObject } from "../../common/schemas/fields.ts";
import { SseParser } from "../../common/schemas/sse.ts";

interface ChoiceSoFar {
  content: string;
  finishReason?: string;
}

export class StreamAccumulator {
  private readonly parser = new SseParser();
  private readonly choices = new Map<number, ChoiceSoFar>();
  private head: JsonObject = {};
  private usage: unknown;
  private done = false;
  private unusable = false;

  /** Feeds bytes of the client-facing stream. */
  push(chunk: Buffer): void {
    if (this.unusable) return;
    for (const event of this.parser.push(chunk)) this.take(event.data);
  }

  /** At the end of the stream: the completion JSON text, or `undefined` if it cannot be cached. */
  end(): string | undefined {
    if (!this.unusable) for (const event of this.parser.flush()) this.take(event.data);
    if (this.unusable || !this.done || this.choices.size === 0) return undefined;
    const choices: JsonObject[] = [];
    for (const [index, choice] of [...this.choices].sort(([a], [b]) => a - b)) {
      if (choice.finishReason === undefined) return undefined;
      choices.push({ index, message: { role: "assistant", content: choice.content, refusal: null }, logprobs: null, finish_reason: choice.finishReason });
    }
    const { id, created, model, system_fingerprint } = this.head;
    return JSON.stringify({
      id,
      object: "chat.completion",
      created,
      model,
      ...(system_fingerprint !== undefined && { system_fingerprint }),
      choices,
      ...(this.usage !== undefined && { usage: this.usage }),
    });
  }

  private take(data: string): void {
    if (this.unusable) return;
    if (data === "[DONE]") {
      this.done = true;
      return;
    }
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      this.unusable = true;
      return;
    }
    if (!isObject(chunk) || chunk.error !== undefined) {
      this.unusable = true;
      return;
    }
    if (this.head.id === undefined)
      this.head = { id: chunk.id, created: chunk.created, model: chunk.model, system_fingerprint: chunk.system_fingerprint ?? undefined };
    if (isObject(chunk.usage)) this.usage = chunk.usage;
    for (const choice of Array.isArray(chunk.choices) ? chunk.choices : []) this.takeChoice(choice);
  }

  private takeChoice(choice: unknown): void {
    if (!isObject(choice) || typeof choice.index !== "number" || (choice.logprobs !== undefined && choice.logprobs !== null)) {
      this.unusable = true;
      return;
    }
    const delta = isObject(choice.delta) ? choice.delta : {};
    if (delta.tool_calls !== undefined || delta.function_call !== undefined || (delta.refusal !== undefined && delta.refusal !== null)) {
      this.unusable = true;
      return;
    }
    const so = this.choices.get(choice.index) ?? { content: "" };
    if (typeof delta.content === "string") so.content += delta.content;
    if (typeof choice.finish_reason === "string") so.finishReason = choice.finish_reason;
    this.choices.set(choice.index, so);
  }
}
