/**
 * A short-lived, bounded cache of key lookups in front of the `TenantStore`, so the hot path
 * reads the store at most once per key per `ttlMs` (default 5 s), concurrent lookups of one key
 * included. Unknown keys are cached too, so a flood of bad keys costs the store little.
 *
 * The bound this sets: a key revoked (or created) on another replica is seen within `ttlMs`;
 * the replica that serves the revoke forgets the key at once.
 */
import type { TenantStore } from "../store/tenant-store.ts";
import type { ApiKeyRecord } from "./model.ts";

export const KEY_CACHE_TTL_MS = 5_000;
const KEY_CACHE_MAX_ENTRIES = 10_000;

export interface KeyCacheOptions {
  ttlMs?: number;
  maxEntries?: number;
  /** Clock in ms (tests). */
  now?: () => number;
}

export class KeyCache {
  private readonly entries = new Map<string, { at: number; record: Promise<ApiKeyRecord | undefined> }>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(
    private readonly store: Pick<TenantStore, "keyByHash">,
    options: KeyCacheOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? KEY_CACHE_TTL_MS;
    this.maxEntries = options.maxEntries ?? KEY_CACHE_MAX_ENTRIES;
    this.now = options.now ?? Date.now;
  }

  /** The record of the key with this hash, as of at most `ttlMs` ago. */
  lookup(hash: string): Promise<ApiKeyRecord | undefined> {
    const at = this.now();
    const hit = this.entries.get(hash);
    if (hit && at - hit.at < this.ttlMs) return hit.record;
    this.entries.delete(hash);
    if (this.entries.size >= this.maxEntries) {
      // Map keeps insertion order: the first entry is the oldest.
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    const record = this.store.keyByHash(hash);
    const entry = { at, record };
    this.entries.set(hash, entry);
    // A failed read is not cached: the next lookup tries the store again.
    record.catch(() => {
      if (this.entries.get(hash) === entry) this.entries.delete(hash);
    });
    return record;
  }

  /** Forgets a key (after revoking it through this replica). */
  forget(hash: string): void {
    this.entries.delete(hash);
  }
}
