/**
 * A body read with an idle deadline: each chunk must come within `idleMs` of the moment the
 * reader asked for it, else the source is destroyed with the deadline's error, which the read
 * then throws. (Destroying is what ends a read in flight: an async iterator's `return()` would
 * wait for it.) One timer per read, re-armed with `refresh()` for each chunk: a stream of many
 * small chunks creates no timer per chunk.
 */
import type { Readable } from "node:stream";

export async function* idleGuarded(source: Readable, idleMs: number, timeout: () => Error): AsyncGenerator<Buffer> {
  // While the reader holds a chunk the deadline does not run: a firing then only re-arms.
  let waiting = true;
  const timer = setTimeout(function fire() {
    if (waiting) source.destroy(timeout());
    else timer.refresh();
  }, idleMs);
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      waiting = false;
      yield chunk;
      waiting = true;
      timer.refresh();
    }
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The whole body of `source`, each chunk within `idleMs` of the one before (the same deadline as
 * `idleGuarded`, for a body read in one piece): events and one re-armed timer, no async iterator.
 */
export function readAllGuarded(source: Readable, idleMs: number, timeout: () => Error): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => source.destroy(timeout()), idleMs);
    source.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      timer.refresh();
    });
    source.once("end", () => {
      clearTimeout(timer);
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    });
    source.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    source.once("close", () => {
      clearTimeout(timer);
      // Destroyed without an error (the client went away and the call was aborted): nothing comes.
      if (!source.readableEnded) reject(source.errored ?? new Error("the body ended before it was complete"));
    });
  });
}
