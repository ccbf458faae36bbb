/**
 * What of the history goes to the target: all of it while it fits the target's budget and the
 * gear did not change; else — the brief's rule — a summary of everything older than the last two
 * full turns, then those two turns, then the new messages. A turn is a user message and all that
 * answers it (assistant messages, tool calls, tool results). The summary covers messages by
 * absolute sequence number, so the one stored is extended with what aged out since, not rebuilt.
 */
import type { Message } from "../../common/canonical/types.ts";
import { extendSummary } from "./extractive.ts";
import type { ConversationSummary } from "./store.ts";

export const KEPT_TURNS = 2;

export interface HistoryInput {
  /** The stored messages in front of the client's, oldest first. */
  history: readonly Message[];
  /** The sequence number of `history[0]` (messages compacted away before it are in `summary`). */
  firstSeq: number;
  summary: ConversationSummary | undefined;
}

export interface CompressedHistory {
  /** The history to send: all of it, or the last full turns (the summary goes separately). */
  kept: Message[];
  /** The summary to send before `kept`; absent when the whole history is sent. */
  summary?: ConversationSummary;
  /** How many stored messages the summary stands for. */
  summarized: number;
  /** Set when `summary` was written now: the stored summary it extended (absent: written from scratch) and the messages that aged out into it (for a summarizer that rewrites it, `edge-summarizer.ts`). */
  extended?: { from?: ConversationSummary; aged: readonly Message[] };
}

/** The index in `history` where the last `turns` full turns begin (0: the history has no more than that). */
export function lastTurnsStart(history: readonly Message[], turns = KEPT_TURNS): number {
  let seen = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    if (history[i]?.role === "user" && ++seen === turns) return i;
  }
  return 0;
}

/** The whole history, with the stored summary in front when messages were compacted away. */
export function uncompressed(input: HistoryInput): CompressedHistory {
  const summary = input.firstSeq > 0 ? input.summary : undefined;
  return { kept: [...input.history], ...(summary && { summary }), summarized: summary ? input.firstSeq : 0 };
}

/** Summary of what is older than the last full turns, extending the stored summary with what aged out since (extractive). */
export function compressed(
  input: HistoryInput,
  summarize: (previous: string | undefined, aged: readonly Message[]) => string = extendSummary,
): CompressedHistory {
  const start = lastTurnsStart(input.history);
  const through = input.firstSeq + start;
  if (start === 0 && input.firstSeq === 0) return uncompressed(input);
  const stored = input.summary;
  if (stored && stored.through >= through) {
    const keptFrom = Math.max(0, stored.through - input.firstSeq);
    return { kept: input.history.slice(keptFrom), summary: stored, summarized: stored.through };
  }
  const base = stored && stored.through >= input.firstSeq ? stored : undefined;
  const aged = input.history.slice(base ? base.through - input.firstSeq : 0, start);
  // Frozen: the memory store keeps this very object, and its token count with it (`conversations.ts`).
  const summary = Object.freeze({ through, text: summarize(base?.text, aged), by: "extractive" });
  return { kept: input.history.slice(start), summary, summarized: through, extended: { ...(base && { from: base }), aged } };
}
