/** The response store in one process: a Map in insertion order (oldest first), expired on read. */
import { DEFAULT_MAX_RESPONSES, type ResponseStore, type ResponseStoreOptions, type StoredResponse } from "./response-store.ts";

interface Entry {
  value: string;
  expires: number;
}

export class MemoryResponseStore implements ResponseStore {
  private readonly entries = new Map<string, Entry>();
  private readonly max: number;

  constructor(
    private readonly options: ResponseStoreOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.max = options.maxResponses ?? DEFAULT_MAX_RESPONSES;
  }

  get(tenant: string, id: string): Promise<StoredResponse | undefined> {
    const key = `${tenant}\u0000${id}`;
    const entry = this.entries.get(key);
    if (entry === undefined) return Promise.resolve(undefined);
    if (entry.expires <= this.now()) {
      this.entries.delete(key);
      return Promise.resolve(undefined);
    }
    // Stored as JSON so a caller changing what it got cannot change what is stored.
    return Promise.resolve(JSON.parse(entry.value) as StoredResponse);
  }

  put(tenant: string, id: string, value: StoredResponse): Promise<void> {
    this.entries.set(`${tenant}\u0000${id}`, { value: JSON.stringify(value), expires: this.now() + this.options.ttlMs });
    while (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.entries.clear();
    return Promise.resolve();
  }
}
