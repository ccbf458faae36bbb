/**
 * Incremental Server-Sent Events framing. Upstream bytes arrive in arbitrary chunks (an event
 * may be split across several, several may share one); `SseParser` hands out whole events and
 * keeps the tail. Events keep their raw bytes so a pass-through can re-emit them unchanged.
 */

export interface SseEvent {
  /** The `event:` field, when present. */
  event?: string;
  /** The `data:` lines joined with "\n". */
  data: string;
  /** The event's bytes as received, terminator included. */
  raw: Buffer;
}

const LF = 0x0a;
const CR = 0x0d;

export class SseParser {
  private pending: Buffer = Buffer.alloc(0);

  /** Feeds a chunk; returns the events it completed. */
  push(chunk: Buffer): SseEvent[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const events: SseEvent[] = [];
    let start = 0;
    for (;;) {
      const end = findEventEnd(this.pending, start);
      if (end < 0) break;
      const raw = this.pending.subarray(start, end);
      const event = parseEvent(raw);
      if (event) events.push(event);
      start = end;
    }
    this.pending = start === 0 ? this.pending : Buffer.from(this.pending.subarray(start));
    return events;
  }

  /** At end of stream: the unterminated tail as a last event, if it holds one. */
  flush(): SseEvent[] {
    const tail = this.pending;
    this.pending = Buffer.alloc(0);
    if (tail.length === 0) return [];
    const event = parseEvent(tail);
    return event ? [event] : [];
  }

  /** Bytes received but not yet part of a complete event. */
  get buffered(): number {
    return this.pending.length;
  }
}

/** Index just past the blank line ending the event that starts at `from`, or -1. */
export function findEventEnd(buf: Buffer, from: number): number {
  let i = buf.indexOf(LF, from);
  while (i >= 0 && i + 1 < buf.length) {
    const next = buf[i + 1];
    if (next === LF) return i + 2;
    if (next === CR && buf[i + 2] === LF) return i + 3;
    i = buf.indexOf(LF, i + 1);
  }
  return -1;
}

function parseEvent(raw: Buffer): SseEvent | undefined {
  // The common shape, one `data:` line and its blank line: read without splitting lines.
  const n = raw.length;
  if (n >= 7 && raw[0] === 0x64 && raw[1] === 0x61 && raw[2] === 0x74 && raw[3] === 0x61 && raw[4] === 0x3a /* data: */) {
    if (raw[n - 1] === LF && raw[n - 3] !== CR && raw.indexOf(LF) === n - 2) return { data: raw.toString("utf8", raw[5] === 0x20 ? 6 : 5, n - 2), raw };
  }
  const data: string[] = [];
  let event: string | undefined;
  for (const line of raw.toString("utf8").split(/\r?\n/)) {
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") data.push(value);
    else if (field === "event") event = value;
  }
  if (data.length === 0 && event === undefined) return undefined;
  return event === undefined ? { data: data.join("\n"), raw } : { event, data: data.join("\n"), raw };
}

/** Encodes one `data:` event. */
export function sseData(data: string): Buffer {
  return Buffer.from(`data: ${data}\n\n`);
}
