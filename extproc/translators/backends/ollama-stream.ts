/**
 * Ollama's streamed `/api/chat` (NDJSON: one JSON object per `\n`-terminated line, the last with
 * `"done": true`) → canonical chunks. Lines may straddle the byte slices the decoder is fed, and
 * a slice may end inside a multi-byte character: lines are cut on the `\n` byte and decoded
 * whole. An `{"error": …}` line (Ollama's in-band failure, docs/api/errors.mdx) throws.
 */
import type { ChatChunk, ChunkChoice } from "../../../common/canonical/types.ts";
import { GatewayError } from "../../../common/errors.ts";
import type { ChatStreamDecoder } from "../codec.ts";
import { malformedOllama, ollamaErrorMessage, truncatedOllamaStream } from "./ollama-errors.ts";
import { parseUpstreamJson } from "../upstream-json.ts";
import { newOllamaResponseId, nowSeconds, ollamaFinishReason, readOllamaChatObject, toCanonicalCall, type OllamaChatObject } from "./ollama-response.ts";

const LF = 0x0a;
const EMPTY = Buffer.alloc(0);

/** Newline-delimited framing: whole lines out, the unterminated tail kept. Blank lines are skipped. */
export class NdjsonLines {
  private pending: Buffer = EMPTY;

  /** Feeds a slice; returns the lines it completed, without their terminators. */
  push(chunk: Buffer): string[] {
    const buf = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const lines: string[] = [];
    let start = 0;
    for (let end = buf.indexOf(LF, start); end >= 0; end = buf.indexOf(LF, start)) {
      const line = buf.toString("utf8", start, end).trim();
      if (line !== "") lines.push(line);
      start = end + 1;
    }
    this.pending = start === 0 ? buf : start === buf.length ? EMPTY : Buffer.from(buf.subarray(start));
    return lines;
  }

  /** At end of input: the unterminated tail, when it holds more than whitespace. */
  flush(): string | undefined {
    const tail = this.pending.toString("utf8").trim();
    this.pending = EMPTY;
    return tail === "" ? undefined : tail;
  }
}

/**
 * One stream's decoder. Each line gives at most: a reasoning chunk (`thinking`), then a chunk
 * with its content and/or tool calls (each call whole, with a running index), in that order as
 * Ollama's own OpenAI layer splits them; the `done` line then adds a finish-reason chunk and a
 * usage-only chunk (`choices: []`; Ollama always reports usage). The first choice chunk carries
 * `role: "assistant"`; all chunks share one generated id and the first line's `created_at`.
 */
export class OllamaStreamDecoder implements ChatStreamDecoder {
  private readonly lines = new NdjsonLines();
  private readonly id = newOllamaResponseId();
  private created: number | undefined;
  private roleSent = false;
  private toolCalls = 0;
  private done = false;

  push(chunk: Buffer): ChatChunk[] {
    return this.lines.push(chunk).flatMap((line) => this.decode(line, false));
  }

  end(): ChatChunk[] {
    const tail = this.lines.flush();
    const chunks = tail === undefined ? [] : this.decode(tail, true);
    if (!this.done) throw truncatedOllamaStream('ended before its final line ("done": true)');
    return chunks;
  }

  private decode(line: string, unterminated: boolean): ChatChunk[] {
    const parsed = parseUpstreamJson(line, "stream line", "Ollama");
    if (!parsed.ok) throw unterminated ? truncatedOllamaStream("ended in the middle of a line") : parsed.errors[0];
    const json = parsed.value;
    const upstreamMessage = ollamaErrorMessage(json);
    if (upstreamMessage !== undefined) throw new GatewayError(502, "upstream_error", upstreamMessage, { code: "upstream_stream_error" });
    if (this.done) throw malformedOllama('stream (a line after the final "done": true line)');
    const read = readOllamaChatObject(json);
    if (!read.ok) throw malformedOllama(`stream line (${read.errors.join("; ")})`);
    const object = read.value;
    this.created ??= object.created ?? nowSeconds();
    const chunks: ChatChunk[] = [];
    if (object.thinking !== "") chunks.push(this.choiceChunk(object, { reasoning: object.thinking }, null));
    if (object.content !== "" || object.toolCalls.length > 0) chunks.push(this.choiceChunk(object, this.answerDelta(object), null));
    if (object.done) {
      this.done = true;
      chunks.push(this.choiceChunk(object, {}, ollamaFinishReason(object.doneReason, this.toolCalls > 0)));
      chunks.push(Object.assign({}, this.base(object), { choices: [], usage: object.usage }));
    }
    const first = chunks[0]?.choices[0];
    if (first && object.logprobs) first.logprobs = object.logprobs;
    return chunks;
  }

  private answerDelta(object: OllamaChatObject): ChunkChoice["delta"] {
    const delta: ChunkChoice["delta"] = {};
    if (object.content !== "") delta.content = object.content;
    if (object.toolCalls.length > 0) {
      delta.toolCalls = object.toolCalls.map((call) => {
        const index = this.toolCalls++;
        const { id, name, arguments: args } = toCanonicalCall(call, index);
        return { index, id, name, arguments: args };
      });
    }
    return delta;
  }

  private choiceChunk(object: OllamaChatObject, delta: ChunkChoice["delta"], finishReason: ChunkChoice["finishReason"]): ChatChunk {
    if (!this.roleSent) {
      this.roleSent = true;
      delta = { role: "assistant", ...delta };
    }
    return Object.assign({}, this.base(object), { choices: [{ index: 0, delta, finishReason }] });
  }

  private base(object: OllamaChatObject): Omit<ChatChunk, "choices"> {
    return { id: this.id, created: this.created ?? nowSeconds(), model: object.model, extra: {} };
  }
}
