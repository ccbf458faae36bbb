/**
 * The in-process semantic store: entries in a Map in recency order, their vectors in a
 * `VectorIndex`. Entries expire at their `expiresAt`; past `maxBytes` (as `entryBytes` counts) or
 * `maxEntries` the least recently used go first. The index always follows the Map: every
 * eviction, expiry and delete removes the id from it, a search hit whose entry is gone is removed
 * from it, and after an index reset (worker crash) every entry is added again.
 */
import type { Logger } from "../../../common/telemetry/logger.ts";
import type { SemanticEntry, SemanticMatch, SemanticStore, SemanticStoreStats } from "./semantic-store.ts";
import { ExpiryQueue } from "./store-expiry-queue.ts";
import { cosine, entryBytes } from "./store-vector.ts";
import type { VectorIndex } from "./vector-index.ts";

export interface MemorySemanticStoreOptions {
  /** The vector index; the store owns it from now on (adds, removes, closes). */
  index: VectorIndex;
  maxBytes: number;
  maxEntries: number;
  logger: Logger;
  now?: () => number;
}

interface Held {
  entry: SemanticEntry;
  bytes: number;
}

/** Index candidates fetched per requested match: room to re-rank on exact similarity and skip dead ids. */
export function candidatesFor(k: number): number {
  return Math.max(2 * k, k + 4);
}

export class MemorySemanticStore implements SemanticStore {
  /** In recency order: the first entry is the least recently used. */
  private readonly entries = new Map<string, Held>();
  private readonly expiries = new ExpiryQueue();
  private total = 0;
  private readonly index: VectorIndex;
  private readonly maxBytes: number;
  private readonly maxEntries: number;
  private readonly logger: Logger;
  private readonly now: () => number;
  private closed = false;

  constructor(options: MemorySemanticStoreOptions) {
    this.index = options.index;
    this.maxBytes = options.maxBytes;
    this.maxEntries = options.maxEntries;
    this.logger = options.logger;
    this.now = options.now ?? Date.now;
    this.index.onReset(() => {
      for (const { entry } of this.entries.values()) this.index.add(entry.scope, entry.id, entry.vector);
      this.logger.info({ entries: this.entries.size }, "semantic store: index reset; entries re-added");
    });
  }

  async nearest(scope: string, vector: Float32Array, k: number, minSimilarity: number): Promise<SemanticMatch[]> {
    if (this.closed || k < 1) return [];
    this.expire();
    const hits = await this.index.search(scope, vector, candidatesFor(k));
    const now = this.now();
    const matches: SemanticMatch[] = [];
    for (const hit of hits) {
      const held = this.entries.get(hit.id);
      if (!held || held.entry.expiresAt <= now || held.entry.scope !== scope) {
        // Gone (or going) since the index answered: make sure the index forgets it too.
        if (held) this.remove(hit.id);
        else this.index.remove(hit.id);
        continue;
      }
      const similarity = cosine(vector, held.entry.vector);
      if (similarity >= minSimilarity) matches.push({ entry: held.entry, similarity });
    }
    matches.sort((a, b) => b.similarity - a.similarity);
    matches.length = Math.min(matches.length, k);
    for (const { entry } of matches) this.touch(entry.id);
    return matches;
  }

  insert(entry: SemanticEntry): Promise<void> {
    if (this.closed) return Promise.resolve();
    const now = this.now();
    this.expire();
    if (entry.vector.length !== this.index.dimensions) {
      this.logger.warn(
        { id: entry.id, dimensions: entry.vector.length, expected: this.index.dimensions },
        "semantic store: wrong vector dimensions; not stored",
      );
      return Promise.resolve();
    }
    this.remove(entry.id);
    if (entry.expiresAt <= now) return Promise.resolve();
    const bytes = entryBytes(entry);
    if (bytes > this.maxBytes) {
      this.logger.debug({ id: entry.id, bytes, maxBytes: this.maxBytes }, "semantic store: entry larger than the store; not stored");
      return Promise.resolve();
    }
    this.entries.set(entry.id, { entry, bytes });
    this.total += bytes;
    this.index.add(entry.scope, entry.id, entry.vector);
    this.expiries.push(entry.id, entry.expiresAt);
    for (const [oldest] of this.entries) {
      if (this.total <= this.maxBytes && this.entries.size <= this.maxEntries) break;
      this.remove(oldest);
    }
    return Promise.resolve();
  }

  delete(id: string): Promise<void> {
    this.remove(id);
    return Promise.resolve();
  }

  stats(): SemanticStoreStats {
    return { entries: this.entries.size, bytes: this.total };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.entries.clear();
    this.expiries.clear();
    this.total = 0;
    await this.index.close();
  }

  private touch(id: string): void {
    const held = this.entries.get(id);
    if (!held) return;
    this.entries.delete(id);
    this.entries.set(id, held);
  }

  private remove(id: string): void {
    const held = this.entries.get(id);
    if (!held) return;
    this.entries.delete(id);
    this.total -= held.bytes;
    this.index.remove(id);
  }

  /** Removes every entry past its expiry; rebuilds the expiry queue once it holds mostly stale ids. */
  private expire(): void {
    for (const [id, expiresAt] of this.expiries.due(this.now())) {
      if (this.entries.get(id)?.entry.expiresAt === expiresAt) this.remove(id);
    }
    if (this.expiries.length > 2 * this.entries.size + 1024) {
      this.expiries.clear();
      for (const [id, { entry }] of this.entries) this.expiries.push(id, entry.expiresAt);
    }
  }
}
