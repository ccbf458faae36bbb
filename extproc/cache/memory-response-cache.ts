/**
 * The in-process response cache: entries expire after their TTL, and the least recently used
 * go first once the total size (key + completion bytes) passes `maxBytes`.
 */
import type { CachedAnswer, CacheKey, ResponseCache } from "./response-cache.ts";

interface Entry {
  answer: CachedAnswer;
  bytes: number;
  expiresAt: number;
}

export class MemoryResponseCache implements ResponseCache {
  /** In recency order: the first entry is the least recently used. */
  private readonly entries = new Map<string, Entry>();
  private total = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Bytes held (keys and completions). */
  get bytes(): number {
    return this.total;
  }

  get(key: CacheKey): Promise<CachedAnswer | undefined> {
    const id = idOf(key);
    const entry = this.entries.get(id);
    if (!entry) return Promise.resolve(undefined);
    this.entries.delete(id);
    if (entry.expiresAt <= this.now()) {
      this.total -= entry.bytes;
      return Promise.resolve(undefined);
    }
    this.entries.set(id, entry);
    return Promise.resolve(entry.answer);
  }

  put(key: CacheKey, answer: CachedAnswer, ttlMs: number): Promise<void> {
    const id = idOf(key);
    const bytes = Buffer.byteLength(id) + Buffer.byteLength(answer.completion);
    this.remove(id);
    if (bytes > this.maxBytes) return Promise.resolve();
    this.entries.set(id, { answer, bytes, expiresAt: this.now() + ttlMs });
    this.total += bytes;
    for (const [oldest] of this.entries) {
      if (this.total <= this.maxBytes) break;
      this.remove(oldest);
    }
    return Promise.resolve();
  }

  private remove(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    this.total -= entry.bytes;
  }
}

function idOf(key: CacheKey): string {
  return `${key.tenant}\u0000${key.hash}`;
}
