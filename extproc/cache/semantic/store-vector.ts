/** Vector helpers shared by the semantic stores: exact similarity, entry size, Redis encoding. */
import type { SemanticEntry } from "./semantic-store.ts";

/** Cosine similarity of two vectors of the same length (0 if either is all zeros). */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** Bytes an entry holds as the stores count them: its strings (UTF-8) and its vector (4 bytes a value). */
export function entryBytes(entry: SemanticEntry): number {
  return (
    Buffer.byteLength(entry.id) +
    Buffer.byteLength(entry.tenant) +
    Buffer.byteLength(entry.scope) +
    Buffer.byteLength(entry.question) +
    Buffer.byteLength(entry.completion) +
    entry.vector.byteLength
  );
}

/** The vector as little-endian float32 bytes (a copy). */
export function vectorToBuffer(vector: Float32Array): Buffer {
  const out = Buffer.allocUnsafe(vector.length * 4);
  for (let i = 0; i < vector.length; i++) out.writeFloatLE(vector[i]!, i * 4);
  return out;
}

/** The inverse of `vectorToBuffer`; `undefined` if the byte length is not a whole number of floats. */
export function bufferToVector(buffer: Buffer): Float32Array | undefined {
  if (buffer.length % 4 !== 0) return undefined;
  const out = new Float32Array(buffer.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = buffer.readFloatLE(i * 4);
  return out;
}
