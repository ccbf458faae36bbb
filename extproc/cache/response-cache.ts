/**
 * The exact response cache: a complete OpenAI chat completion stored under the hash of the
 * canonical request (`cache-key.ts`). Implementations never fail a request: a store in trouble
 * answers a miss and drops the write.
 */

/** A cached answer: the OpenAI chat completion JSON text, as the client received it. */
export interface CachedAnswer {
  completion: string;
}

export interface ResponseCache {
  /** The answer stored under `key` and not yet expired; `undefined` on a miss or a store failure. */
  get(key: CacheKey): Promise<CachedAnswer | undefined>;
  /** Stores `answer` for `ttlMs`; resolves (never rejects) whether or not it was stored. */
  put(key: CacheKey, answer: CachedAnswer, ttlMs: number): Promise<void>;
}

/** Where an entry lives: the tenant (Redis hash tag) and the request's hash. */
export interface CacheKey {
  tenant: string;
  hash: string;
}
