/**
 * From an ONNX model's output tensor to one unit-length vector per text, as
 * sentence-transformers does it: token states are mean-pooled over the attention mask (padding
 * never counts), then every vector, pooled here or by the model, is L2-normalized so a dot
 * product is the cosine similarity (OpenAI's embeddings are unit length too). A text with no
 * tokens, or an all-zero vector, stays all zeros rather than becoming NaN.
 */

/** Scales `vector` in place to unit L2 length (a zero vector is left as is). */
export function normalizeInPlace(vector: number[]): number[] {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i += 1) vector[i] = (vector[i] ?? 0) / norm;
  return vector;
}

/**
 * Mean of each row's token states where `mask` is 1, normalized.
 * `states` is `[batch, seq, hidden]` row-major; `mask` is `[batch, seq]`.
 */
export function meanPool(states: Float32Array, mask: ArrayLike<number>, batch: number, seq: number, hidden: number): number[][] {
  const out: number[][] = [];
  for (let b = 0; b < batch; b += 1) {
    const vector = new Array<number>(hidden).fill(0);
    let count = 0;
    for (let s = 0; s < seq; s += 1) {
      if ((mask[b * seq + s] ?? 0) === 0) continue;
      count += 1;
      const base = (b * seq + s) * hidden;
      for (let h = 0; h < hidden; h += 1) vector[h] = (vector[h] ?? 0) + (states[base + h] ?? 0);
    }
    if (count > 0) for (let h = 0; h < hidden; h += 1) vector[h] = (vector[h] ?? 0) / count;
    out.push(normalizeInPlace(vector));
  }
  return out;
}

/** The rows of a `[batch, hidden]` tensor, normalized. */
export function pooledRows(data: Float32Array, batch: number, hidden: number): number[][] {
  const out: number[][] = [];
  for (let b = 0; b < batch; b += 1) out.push(normalizeInPlace(Array.from(data.subarray(b * hidden, (b + 1) * hidden))));
  return out;
}
