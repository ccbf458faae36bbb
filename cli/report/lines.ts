/**
 * The lines of a file, streamed: gzip is recognised by its magic bytes (1f 8b), not by the name,
 * so a rotated `requests.log.1` that is compressed reads as well as `requests.jsonl.gz`.
 */
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { createInterface } from "node:readline";
import { createGunzip } from "node:zlib";
import type { Readable } from "node:stream";

export async function isGzip(file: string): Promise<boolean> {
  const handle = await open(file, "r");
  try {
    const head = Buffer.alloc(2);
    const { bytesRead } = await handle.read(head, 0, 2, 0);
    return bytesRead === 2 && head[0] === 0x1f && head[1] === 0x8b;
  } finally {
    await handle.close();
  }
}

/** Each line of `file` (gunzipped when it is gzip), without its line break. */
export async function* fileLines(file: string): AsyncGenerator<string> {
  const gzip = await isGzip(file);
  const raw = createReadStream(file, { highWaterMark: 1 << 20 });
  const input: Readable = gzip ? raw.pipe(createGunzip()) : raw;
  // A broken gzip stream ends the file with an error the caller sees, not an unhandled event.
  if (gzip) raw.on("error", (err) => input.destroy(err));
  const lines = createInterface({ input, crlfDelay: Infinity });
  try {
    for await (const line of lines) yield line;
  } finally {
    lines.close();
    raw.destroy();
  }
}
