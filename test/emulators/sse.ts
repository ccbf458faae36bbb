/**
 * Server-sent events as a provider writes them: events framed as `data: <json>\n\n`, cut into
 * TCP writes with delays between them, optionally cut in the middle of events so parsers are
 * tested across chunk boundaries.
 */
import type { ServerResponse } from "node:http";
import { setImmediate as yieldToLoop, setTimeout as sleep } from "node:timers/promises";

/** How a stream is paced onto the wire. */
export interface StreamPacing {
  /** SSE events per write when events are not split. Default 1. */
  eventsPerWrite: number;
  /** Delay between writes in milliseconds; 0 only yields to the event loop. Default 0. */
  delayMs: number;
  /**
   * Cut the stream inside every event, so each write holds the tail of one event and the head
   * of the next, and no write but the last ends on an event boundary. The cut is the event's
   * middle byte, or, when the event holds multi-byte UTF-8, inside the character nearest the
   * middle (decoders are tested too). Default false.
   */
  splitEvents: boolean;
}

/** Pacing used when neither the emulator nor the queued fixture sets one. */
export const DEFAULT_PACING: Readonly<StreamPacing> = { eventsPerWrite: 1, delayMs: 0, splitEvents: false };

/** What happened to one paced stream. */
export interface StreamOutcome {
  /** Writes planned for the whole stream. */
  writes: number;
  /** Writes handed to the socket before the stream ended or the client left. */
  writesSent: number;
  /** True when the client disconnected before the stream was complete. */
  aborted: boolean;
}

/** Frames `.chunks.txt` lines as SSE events, `data: <line>\n\n` each, then `data: [DONE]\n\n`. */
export function chunkLinesToSseEvents(lines: readonly string[]): string[] {
  return [...lines.map((line) => `data: ${line}\n\n`), "data: [DONE]\n\n"];
}

/** Cuts a list of SSE events into the byte chunks to write, following `pacing`. */
export function planSseWrites(events: readonly string[], pacing: StreamPacing): Buffer[] {
  const encoded = events.map((event) => Buffer.from(event, "utf8"));
  const whole = Buffer.concat(encoded);
  if (pacing.splitEvents) {
    const cuts: number[] = [];
    let offset = 0;
    for (const event of encoded) {
      const cut = offset + cutPoint(event);
      if (cut > (cuts.at(-1) ?? 0)) cuts.push(cut);
      offset += event.length;
    }
    const bounds = [0, ...cuts, whole.length];
    return bounds.slice(1).map((end, i) => whole.subarray(bounds[i] ?? 0, end));
  }
  const perWrite = Math.max(1, Math.floor(pacing.eventsPerWrite));
  const writes: Buffer[] = [];
  for (let i = 0; i < encoded.length; i += perWrite) writes.push(Buffer.concat(encoded.slice(i, i + perWrite)));
  return writes;
}

/** Where to cut one event: inside the multi-byte character nearest its middle, else its middle. */
function cutPoint(event: Buffer): number {
  const middle = Math.floor(event.length / 2);
  let best = middle;
  let found = false;
  for (let i = 0; i < event.length; i += 1) {
    const isLeadByte = (event[i] ?? 0) >= 0xc0;
    if (isLeadByte && (!found || Math.abs(i + 1 - middle) < Math.abs(best - middle))) {
      best = i + 1;
      found = true;
    }
  }
  return best;
}

/**
 * Writes the planned chunks to `res` one by one, pausing `delayMs` between them, then ends it.
 * Stops early, without throwing, when the client disconnects; the outcome says so.
 */
export async function writePaced(res: ServerResponse, writes: readonly Buffer[], delayMs: number): Promise<StreamOutcome> {
  let closed = false;
  res.once("close", () => {
    closed = true;
  });
  let writesSent = 0;
  for (const chunk of writes) {
    if (closed || res.destroyed) return { writes: writes.length, writesSent, aborted: true };
    if (!res.write(chunk)) await drainOrClose(res);
    writesSent += 1;
    if (writesSent < writes.length) {
      if (delayMs > 0) await sleep(delayMs);
      else await yieldToLoop();
    }
  }
  res.end();
  return { writes: writes.length, writesSent, aborted: false };
}

function drainOrClose(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
  });
}
