/**
 * Framing of `streamGenerateContent?alt=sse` bytes. Gemini frames each `GenerateContentResponse`
 * as `data: <json>` plus a blank line, and never sends `[DONE]`: the stream just ends. An error
 * after the stream started may arrive as a bare JSON body (`{"error": {...}}`, no `data:`), which
 * an SSE parser skips as a block without fields; this framer hands such blocks out too, so the
 * decoder can raise the error instead of losing it. Framing is `SseParser`'s; the framer only
 * counts bytes to notice skipped blocks, and keeps the parser's unfinished tail to read them.
 */
import { SseParser } from "../../../common/schemas/sse.ts";

/** A framed block: an SSE `data` payload, or text that carried no SSE field. */
export type GeminiBlock = { kind: "data"; data: string } | { kind: "raw"; text: string };

const EMPTY = Buffer.alloc(0);

/** Per-stream framer: bytes in, `data` payloads and field-less blocks out. */
export class GeminiSseFramer {
  private readonly parser = new SseParser();
  /** A copy of the bytes the parser holds back (the start of an unfinished block). */
  private tail: Buffer = EMPTY;

  /** Feeds a slice; returns the blocks it completed, in stream order. */
  push(chunk: Buffer): GeminiBlock[] {
    const before = this.tail;
    const events = this.parser.push(chunk);
    const held = this.parser.buffered;
    let framed = 0;
    for (const event of events) framed += event.raw.length;
    const completed = before.length + chunk.length - held;
    if (held === 0) this.tail = EMPTY;
    else if (held <= chunk.length) this.tail = chunk.subarray(chunk.length - held);
    else this.tail = Buffer.concat([before.subarray(before.length - (held - chunk.length)), chunk]);
    if (framed === completed) return events.map((e) => ({ kind: "data", data: e.data }));
    // Some block carried no SSE field: find it between the events, in the bytes just completed.
    const window = Buffer.concat([before, chunk]).subarray(0, completed);
    const blocks: GeminiBlock[] = [];
    let cursor = 0;
    for (const event of events) {
      const at = window.indexOf(event.raw, cursor);
      if (at > cursor) pushRaw(blocks, window.subarray(cursor, at));
      blocks.push({ kind: "data", data: event.data });
      cursor = (at < 0 ? cursor : at) + event.raw.length;
    }
    if (cursor < window.length) pushRaw(blocks, window.subarray(cursor));
    return blocks;
  }

  /**
   * At the end of the stream: the last block if it lacked its closing blank line. Whether it is
   * usable is the decoder's call (a `data:` line with complete JSON is; a cut one is not).
   */
  flush(): GeminiBlock[] {
    const tail = this.tail;
    this.tail = EMPTY;
    const events = this.parser.flush();
    if (events.length > 0) return events.map((e) => ({ kind: "data", data: e.data }));
    const blocks: GeminiBlock[] = [];
    pushRaw(blocks, tail);
    return blocks;
  }
}

/** Keeps a field-less block unless it is only blank lines or SSE comments. */
function pushRaw(blocks: GeminiBlock[], bytes: Buffer): void {
  const text = bytes.toString("utf8");
  const meaningful = text.split(/\r?\n/).some((line) => line.trim() !== "" && !line.startsWith(":"));
  if (meaningful) blocks.push({ kind: "raw", text });
}
