/**
 * Token counts for history budgets, from a real tokenizer: OpenAI's BPE encodings
 * (gpt-tokenizer): `cl100k_base` for GPT-3.5/GPT-4, `o200k_base` for GPT-4o, GPT-4.1, o-series
 * and GPT-5, and `o200k_base` as the stand-in for other cloud models (Anthropic and Google publish
 * no tokenizer; within about 10 % on English text). A chat message costs its text plus OpenAI's
 * documented 3 tokens of framing; the reply is primed with 3 more.
 *
 * Counts are kept per stored message and per text (`cachedCounter`): a conversation's stored
 * messages are counted once, not on every turn that sends them again (a 40-turn history is ~5 k
 * tokens of BPE per request otherwise). Edge models count with the edge agent's own tokenizer (`edge-tokens.ts`).
 */
import { countTokens as countCl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as countO200k } from "gpt-tokenizer/encoding/o200k_base";
import type { Message } from "../../common/canonical/types.ts";

export interface TokenCounter {
  /** `text`'s tokens. */
  text(text: string): number;
  /** A message list's tokens as a chat request counts them. */
  messages(messages: readonly Message[]): number;
  /**
   * `key`'s tokens: `count()` the first time, then kept for as long as `key` lives (a stored
   * summary is counted once, not on every turn that sends it). A provisional count is not kept
   * (`edge-tokens.ts`).
   */
  memo(key: object, count: () => number): number;
}

const PER_MESSAGE = 3;
const REPLY_PRIMING = 3;

/**
 * Token counts by text, holding at most about `maxChars` characters of text. A text is looked up
 * by its value, so a message read again from Redis (a new object each time) is not counted
 * again. Two generations: when the young one holds half the budget it becomes the old one and
 * the previous old one is dropped whole; a hit in the old one moves to the young one. (Evicting
 * one oldest key per insert walks the Map's deleted slots and costs more than the count saved.)
 */
export class CountCache {
  private young = new Map<string, number>();
  private old = new Map<string, number>();
  private youngChars = 0;

  constructor(private readonly maxChars = 8_000_000) {}

  get(text: string): number | undefined {
    const hit = this.young.get(text);
    if (hit !== undefined) return hit;
    const aged = this.old.get(text);
    if (aged !== undefined) this.set(text, aged);
    return aged;
  }

  set(text: string, count: number): void {
    if (text.length > this.maxChars / 2) return;
    if (this.youngChars + text.length > this.maxChars / 2) {
      this.old = this.young;
      this.young = new Map();
      this.youngChars = 0;
    }
    this.young.set(text, count);
    this.youngChars += text.length;
  }

  get size(): number {
    return this.young.size + this.old.size;
  }
}

/**
 * A counter over `count` (a text's tokens), cached two ways: per message object (the memory
 * store hands out the same frozen messages every turn, so a stored message is counted once for
 * as long as it is stored) and per text (a message read again from Redis is a new object).
 */
export function cachedCounter(count: (text: string) => number, cache = new CountCache()): TokenCounter {
  const byMessage = new WeakMap<Message, number>();
  const text = (t: string): number => {
    if (t === "") return 0;
    const known = cache.get(t);
    if (known !== undefined) return known;
    const n = count(t);
    cache.set(t, n);
    return n;
  };
  const message = (m: Message): number => {
    const known = byMessage.get(m);
    if (known !== undefined) return known;
    const n = text(messageText(m));
    byMessage.set(m, n);
    return n;
  };
  const memos = new WeakMap<object, number>();
  return {
    text,
    messages: (messages) => messages.reduce((sum, m) => sum + PER_MESSAGE + message(m), messages.length > 0 ? REPLY_PRIMING : 0),
    memo: (key, count) => {
      const known = memos.get(key);
      if (known !== undefined) return known;
      const n = count();
      memos.set(key, n);
      return n;
    },
  };
}

const CL100K = cachedCounter(countCl100k);
const O200K = cachedCounter(countO200k);

/** The counter for a cloud model (one per encoding, shared: its cache serves every conversation). */
export function tokenCounterFor(model: string): TokenCounter {
  return /^(gpt-3\.5|gpt-4(?!o|\.\d)|text-embedding-(ada|3))/.test(model.replace(/^[^/]+\//, "")) ? CL100K : O200K;
}

/** The text a message carries for counting and summarizing: its content, tool calls (name and arguments) and tool results. */
export function messageText(m: Message): string {
  const content = m.content;
  const text = typeof content === "string" ? content : content === null ? "" : content.map((p) => ("text" in p ? p.text : "")).join("\n");
  if (m.role === "assistant" && m.toolCalls && m.toolCalls.length > 0)
    return [text, ...m.toolCalls.map((c) => `${c.name}(${c.arguments})`)].filter(Boolean).join("\n");
  return text;
}
