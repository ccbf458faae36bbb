/**
 * A streamed answer relayed to the client by the front door, chunk by chunk through the
 * processor's response phase (translation, usage, runaway recording), as Envoy hands ext_proc
 * each data frame. Two rules of timing:
 *
 * - The upstream's last bytes (its message complete, nothing left unread) are translated as the
 *   end of the stream, as Envoy marks the last data frame: one write with the end, and the
 *   request's record made only after it (`holdRecord`; the front door releases it).
 * - Of events that arrived together (a provider's burst, or a read that fell behind), the first
 *   one of the stream leaves on its own before the others are translated, so the client's first
 *   token does not wait for the rest of the burst: one more write per stream, no more. Only when
 *   the stream is the front door's one call in flight (`alone`): with others under way, the
 *   client's first byte waits on their work far more than on the rest of its burst, and the
 *   extra write (a system call and a wake-up of the peer, ~5 % of a stream's CPU) is what they
 *   all pay for. Linux's TCP autocorking makes the same trade: small writes go out at once on an
 *   idle socket and are coalesced while the device is busy.
 */
import type http from "node:http";
import { isPending } from "../../common/step.ts";
import { findEventEnd } from "../../common/schemas/sse.ts";
import type { Outcome } from "../processor/outcome.ts";
import type { RequestProcessor } from "../processor/processor.ts";

type StreamPhases = Pick<RequestProcessor, "responseBody" | "holdRecord">;

/**
 * Relays `chunks` (the upstream's body, `upstream` its message) to `res`, whose headers are
 * already set. `alone`: whether this is the only call in flight, asked when the first chunk comes.
 */
export async function relayStream(
  res: http.ServerResponse,
  processor: StreamPhases,
  upstream: http.IncomingMessage,
  chunks: AsyncIterable<Buffer>,
  alone: () => boolean,
): Promise<void> {
  // A streamed chunk is translated synchronously: no extra turn per chunk unless a phase waits.
  const relay = (chunk: Buffer, end: boolean): void | Promise<void> => {
    if (end) processor.holdRecord();
    const next = processor.responseBody(chunk, end);
    if (!isPending(next)) return written(res, next, chunk, end);
    return next.then((step) => written(res, step, chunk, end));
  };
  let ended = false;
  let first = true;
  for await (const chunk of chunks) {
    if (ended) continue;
    ended = upstream.complete && upstream.readableLength === 0;
    let rest = chunk;
    if (first) {
      first = false;
      const cut = alone() ? firstEventEnd(chunk) : -1;
      if (cut !== -1) {
        const head = relay(chunk.subarray(0, cut), false);
        if (head) await head;
        // A chunked write corks the socket until the next tick: uncorked here, the event leaves now.
        res.uncork();
        rest = chunk.subarray(cut);
      }
    }
    const step = relay(rest, ended);
    if (step) await step;
  }
  if (ended) return;
  processor.holdRecord();
  const last = await processor.responseBody(Buffer.alloc(0), true);
  res.end(last.kind === "continue" ? last.mutation?.body : undefined);
}

/** Writes what the response phase made of a streamed chunk (`end`: with the stream's end). */
function written(res: http.ServerResponse, step: Outcome, chunk: Buffer, end: boolean): void {
  const out = step.kind === "continue" ? (step.mutation?.body ?? chunk) : Buffer.alloc(0);
  if (end) res.end(out.length > 0 ? out : undefined);
  else if (out.length > 0) res.write(out);
}

/**
 * Where a chunk's first server-sent event ends (just past its blank line, as `SseParser` frames
 * events), or -1 when the chunk holds no more than one event.
 */
export function firstEventEnd(chunk: Buffer): number {
  const end = findEventEnd(chunk, 0);
  return end !== -1 && end < chunk.length ? end : -1;
}
