/**
 * Where the gateway keeps conversations, so a client can send only its new turn
 * (`conversation_id`) and get the history in front of it.
 *
 * Semantics every implementation keeps (the shared suite is `store.cases.ts`):
 * - A conversation is scoped to its tenant: the same id under another tenant is another
 *   conversation, never readable across tenants.
 * - `append` adds one exchange — the user's new messages and the final answer, tool calls and
 *   tool results included, in order — atomically: two requests on one conversation append whole
 *   exchanges one after the other, and no message is lost.
 * - Messages carry absolute sequence numbers: `dropped` counts those removed from the head by
 *   `compact`, which folds them into the summary first (the caller makes the summary; a store
 *   knows nothing of requests). A `compact` that raced another is a no-op (`dropped` moved on).
 * - A conversation lives `ttlMs` after its last write; past `maxConversations` (memory) the least
 *   recently written goes first.
 * - System messages are never stored: they come with each request.
 */
import type { Message } from "../../common/canonical/types.ts";

export type ConversationTarget = "edge" | "cloud";

/** What the history older than the kept messages says, as the summarizer wrote it. */
export interface ConversationSummary {
  /** The summary covers messages with sequence numbers below this one. */
  through: number;
  text: string;
  /** Which summarizer wrote it (`extractive`, `edge:<model>`). */
  by: string;
}

export interface StoredConversation {
  /** The kept messages, oldest first; the first has sequence number `dropped`. */
  messages: Message[];
  /** Messages removed from the head by `compact` (covered by `summary`). */
  dropped: number;
  /** The gear that answered the last exchange. */
  lastTarget?: ConversationTarget;
  summary?: ConversationSummary;
}

export interface ConversationStore {
  /** The conversation, or undefined when there is none (never started, expired, deleted). */
  get(tenant: string, id: string): Promise<StoredConversation | undefined>;
  /** Appends one exchange and records who answered it. */
  append(tenant: string, id: string, messages: readonly Message[], target: ConversationTarget): Promise<void>;
  /**
   * Saves a newer summary: one covering more messages than the stored one, or as many when the
   * stored one is extractive and this one is not (the edge's rewrite of it); else nothing.
   */
  saveSummary(tenant: string, id: string, summary: ConversationSummary): Promise<void>;
  /** Removes the messages below `summary.through` (they are in it), if `expectedDropped` is still the stored `dropped`. */
  compact(tenant: string, id: string, expectedDropped: number, summary: ConversationSummary): Promise<boolean>;
  /** True when there was a conversation to delete. */
  delete(tenant: string, id: string): Promise<boolean>;
  close(): Promise<void>;
}

export interface ConversationLimits {
  ttlMs: number;
  /** Memory store only: conversations kept at most (least recently written out first). */
  maxConversations: number;
}
