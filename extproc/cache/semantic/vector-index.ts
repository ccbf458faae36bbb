/**
 * The semantic cache's vector index: ids and their vectors, grouped by scope, so that a search
 * only ever sees vectors of the scope it names (matches never cross scopes). The index holds ids
 * and vectors only; the entries themselves live in a `SemanticStore`, which keeps the index in
 * step with them. The implementation (`index-client.ts`) runs usearch HNSW indexes in a worker
 * thread, off the event loop.
 *
 * Adds and removes are applied in call order, before any later `search`. An index that loses its
 * contents (its worker crashed and was restarted) calls its `onReset` listeners, and its owner
 * adds its entries again; until then searches answer from whatever has been re-added.
 */
export interface IndexHit {
  id: string;
  /** Cosine similarity as the index computes it (on quantised vectors: approximate), −1…1. */
  similarity: number;
}

export interface VectorIndex {
  readonly dimensions: number;
  /** Ids held (all scopes). */
  readonly size: number;
  has(id: string): boolean;
  /** Adds `id` under `scope`; a no-op if `id` is already held. `vector` must have `dimensions` values. */
  add(scope: string, id: string, vector: Float32Array): void;
  /** Removes `id` (a no-op if not held). */
  remove(id: string): void;
  /** Up to `k` ids of `scope` nearest to `vector`, best first; `[]` when the index is in trouble. */
  search(scope: string, vector: Float32Array, k: number): Promise<IndexHit[]>;
  /** Resolves once every add and remove made so far is applied (or lost with a crashed worker). */
  flush(): Promise<void>;
  /** `listener` runs after the index lost its contents; the owner re-adds what it holds. */
  onReset(listener: () => void): void;
  stats(): Promise<VectorIndexStats>;
  close(): Promise<void>;
}

export interface VectorIndexStats {
  /** Ids held (all scopes). */
  size: number;
  /** Scopes with at least one id (one usearch index each). */
  scopes: number;
  /** Vector slots reserved across the scopes' indexes (usearch grows them by powers of two). */
  capacity: number;
  /** Key-table compactions (save + load) the current worker has run; see `index-worker.ts`. */
  compactions: number;
  /** The worker's JS heap in use, bytes (the usearch indexes are native memory outside it). */
  workerHeapBytes: number;
  /** Times the worker was restarted after a crash. */
  restarts: number;
}

/** How each scope's usearch index is built. */
export interface VectorIndexOptions {
  dimensions: number;
  /** Scalar type vectors are stored as: `i8` (default; 1 byte a value) or `f16` (2 bytes). */
  quantization?: "i8" | "f16" | "f32";
  /** HNSW graph degree (usearch `connectivity`); default 16. */
  connectivity?: number;
  /** Candidates kept while inserting (usearch `expansion_add`); default 128. */
  expansionAdd?: number;
  /** Candidates kept while searching (usearch `expansion_search`); default 64. */
  expansionSearch?: number;
  /** Threads usearch uses for a batch of adds; default 1 (searches always use 1). */
  addThreads?: number;
}
