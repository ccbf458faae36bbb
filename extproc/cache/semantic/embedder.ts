/**
 * Turns questions into vectors for the semantic cache. Implementations: the built-in offline
 * embedder (English and Chinese, no model download), an edge agent's `/v1/embeddings`, and a
 * cloud provider's embeddings endpoint. Vectors come back L2-normalised, so cosine similarity is
 * their dot product.
 */
export interface Embedder {
  /** Names the vector space: entries embedded by another embedder never match (it is part of the scope). */
  readonly name: string;
  readonly dimensions: number;
  /** One vector per text, in order. Rejects on failure (the cache then treats the request as a miss). */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
}
