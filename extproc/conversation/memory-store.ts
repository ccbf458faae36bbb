/** Conversations in this process's memory: the embedded default (one replica, lost on restart). */
import type { Message } from "../../common/canonical/types.ts";
import type { ConversationLimits, ConversationStore, ConversationSummary, ConversationTarget, StoredConversation } from "./store.ts";

interface Entry extends StoredConversation {
  expiresAt: number;
}

export class MemoryConversationStore implements ConversationStore {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly limits: ConversationLimits,
    private readonly now: () => number = Date.now,
  ) {}

  get(tenant: string, id: string): Promise<StoredConversation | undefined> {
    const entry = this.live(tenant, id);
    if (!entry) return Promise.resolve(undefined);
    // The stored messages and summary are frozen (`append`, `kept`): a reader gets its own list, not its own copies.
    return Promise.resolve({
      messages: [...entry.messages],
      dropped: entry.dropped,
      ...(entry.lastTarget && { lastTarget: entry.lastTarget }),
      ...(entry.summary && { summary: entry.summary }),
    });
  }

  append(tenant: string, id: string, messages: readonly Message[], target: ConversationTarget): Promise<void> {
    const key = keyOf(tenant, id);
    const entry = this.live(tenant, id) ?? { messages: [], dropped: 0, expiresAt: 0 };
    for (const m of structuredClone([...messages])) entry.messages.push(deepFreeze(m));
    entry.lastTarget = target;
    entry.expiresAt = this.now() + this.limits.ttlMs;
    // Most recently written last: the first key is the one to evict.
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > this.limits.maxConversations) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    return Promise.resolve();
  }

  saveSummary(tenant: string, id: string, summary: ConversationSummary): Promise<void> {
    const entry = this.live(tenant, id);
    if (entry && replaces(summary, entry.summary)) entry.summary = kept(summary);
    return Promise.resolve();
  }

  compact(tenant: string, id: string, expectedDropped: number, summary: ConversationSummary): Promise<boolean> {
    const entry = this.live(tenant, id);
    if (!entry || entry.dropped !== expectedDropped || summary.through <= entry.dropped) return Promise.resolve(false);
    const remove = Math.min(summary.through - entry.dropped, entry.messages.length);
    entry.messages.splice(0, remove);
    entry.dropped += remove;
    entry.summary = kept(summary);
    return Promise.resolve(true);
  }

  delete(tenant: string, id: string): Promise<boolean> {
    const existed = this.live(tenant, id) !== undefined;
    this.entries.delete(keyOf(tenant, id));
    return Promise.resolve(existed);
  }

  close(): Promise<void> {
    this.entries.clear();
    return Promise.resolve();
  }

  private live(tenant: string, id: string): Entry | undefined {
    const key = keyOf(tenant, id);
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }
}

/** Whether `next` is newer than `current` (`ConversationStore.saveSummary`). */
export function replaces(next: ConversationSummary, current: ConversationSummary | undefined): boolean {
  if (current === undefined || next.through > current.through) return true;
  return next.through === current.through && current.by === "extractive" && next.by !== "extractive";
}

/** The summary as stored: a frozen one as it is (its token count, kept by object, still applies), else a frozen copy. */
function kept(summary: ConversationSummary): ConversationSummary {
  return Object.isFrozen(summary) ? summary : Object.freeze({ ...summary });
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Tenant and id joined so that no id can name another tenant's conversation. */
function keyOf(tenant: string, id: string): string {
  return `${tenant.length}:${tenant}:${id}`;
}
