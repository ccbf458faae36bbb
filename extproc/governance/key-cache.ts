/**
 * Key lookups in front of the `TenantStore`, kept as last good values (`store/last-good.ts`):
 * the hot path reads the store at most once per key per `ttlMs` (default 5 s), concurrent
 * lookups of one key included, and a store that fails or is slow (past `readTimeoutMs`) answers
 * from what was last read, for at most `maxStaleMs`. Unknown keys are remembered too, so a flood
 * of bad keys costs the store little. At most `maxEntries` keys are held.
 *
 * The bounds this sets: a key revoked (or created) on another replica is seen within `ttlMs`
 * while Redis answers; while it does not, within `maxStaleMs` at the latest (a key that was
 * never seen cannot be looked up: the caller answers 503). The replica that serves the revoke
 * forgets the key at once.
 */
import type { Step } from "../../common/step.ts";
import { LastGood } from "../store/last-good.ts";
import { StoreHealth } from "../store/store-health.ts";
import type { TenantStore } from "../store/tenant-store.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import type { ApiKeyRecord } from "./model.ts";

export const KEY_CACHE_TTL_MS = 5_000;

export interface KeyCacheOptions {
  ttlMs?: number;
  maxEntries?: number;
  /** The tenant store's health (shared with the directory); a silent one of its own when absent. */
  health?: StoreHealth;
  readTimeoutMs?: number;
  maxStaleMs?: number;
  /** Clock in ms (tests). */
  now?: () => number;
}

export class KeyCache {
  private readonly values: LastGood<string, ApiKeyRecord | undefined>;

  constructor(
    private readonly store: Pick<TenantStore, "keyByHash">,
    options: KeyCacheOptions = {},
  ) {
    this.values = new LastGood({
      health: options.health ?? new StoreHealth("tenants", silentLogger()),
      freshMs: options.ttlMs ?? KEY_CACHE_TTL_MS,
      ...(options.maxEntries !== undefined && { maxEntries: options.maxEntries }),
      ...(options.readTimeoutMs !== undefined && { readTimeoutMs: options.readTimeoutMs }),
      ...(options.maxStaleMs !== undefined && { maxStaleMs: options.maxStaleMs }),
      ...(options.now && { now: options.now }),
    });
  }

  /** The record of the key with this hash, as of at most `ttlMs` ago (`maxStaleMs` while the store fails); at once when held. */
  lookup(hash: string): Step<ApiKeyRecord | undefined> {
    return this.values.get(hash, () => this.store.keyByHash(hash));
  }

  /** Forgets a key (after revoking it through this replica). */
  forget(hash: string): void {
    this.values.forget(hash);
  }
}
