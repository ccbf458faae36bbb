/**
 * Where semantic-cache entries live, with the vector index that finds them. The memory store is
 * the embedded default; the Redis store shares entries across replicas (each replica's index
 * follows a Redis Stream of inserts and deletes and rebuilds from Redis on start). Both pass
 * `semantic-store.cases.ts`. A store never fails a request: trouble answers "no match" and drops
 * the write.
 */

/** One cached answer and the question it answered. */
export interface SemanticEntry {
  /** Unique id (random); the index key. */
  id: string;
  /** Tenant that owns the entry (Redis hash tag). */
  tenant: string;
  /**
   * Hash of everything that must agree for an answer to be reused: tenant, model, system prompt,
   * tools, sampling parameters, the intent label and the embedder. Matches never cross scopes.
   */
  scope: string;
  /** The question's embedding, L2-normalised. */
  vector: Float32Array;
  /** The question as embedded (the last user turn): kept for the entity guard and verification. */
  question: string;
  /** The answer: OpenAI chat completion JSON, as the client received it. */
  completion: string;
  /** Epoch ms. */
  createdAt: number;
  /** Epoch ms after which the entry is gone (never returned, removed from the index). */
  expiresAt: number;
}

export interface SemanticMatch {
  entry: SemanticEntry;
  /** Cosine similarity, −1…1. */
  similarity: number;
}

export interface SemanticStoreStats {
  entries: number;
  /** Bytes of entries held (questions, answers, vectors) as the store counts them. */
  bytes: number;
}

export interface SemanticStore {
  /** Up to `k` live entries of `scope` nearest to `vector` with similarity ≥ `minSimilarity`, best first; `[]` on store trouble. */
  nearest(scope: string, vector: Float32Array, k: number, minSimilarity: number): Promise<SemanticMatch[]>;
  /** Adds an entry (evicting by TTL and LRU-by-bytes as needed); resolves whether or not it was stored. */
  insert(entry: SemanticEntry): Promise<void>;
  /** Removes an entry from the store and every index that holds it. */
  delete(id: string): Promise<void>;
  stats(): SemanticStoreStats;
  close(): Promise<void>;
}
