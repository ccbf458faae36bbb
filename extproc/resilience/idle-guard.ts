/**
 * A body read with an idle deadline: each chunk must come within `idleMs` of the moment the
 * reader asked for it, else the source is destroyed with the deadline's error, which the read
 * then throws. (Destroying is what ends a read in flight: an async iterator's `return()` would
 * wait for it.)
 */
import type { Readable } from "node:stream";

export async function* idleGuarded(source: Readable, idleMs: number, timeout: () => Error): AsyncGenerator<Buffer> {
  const fire = () => source.destroy(timeout());
  let timer = setTimeout(fire, idleMs);
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      clearTimeout(timer);
      yield chunk;
      timer = setTimeout(fire, idleMs);
    }
  } finally {
    clearTimeout(timer);
  }
}
