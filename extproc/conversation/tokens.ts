/**
 * Token counts for history budgets, from a real tokenizer: OpenAI's BPE encodings
 * (gpt-tokenizer): `cl100k_base` for GPT-3.5/GPT-4, `o200k_base` for GPT-4o, GPT-4.1, o-series
 * and GPT-5, and `o200k_base` as the stand-in for other cloud models (Anthropic and Google publish
 * no tokenizer; within about 10 % on English text). A chat message costs its text plus OpenAI's
 * documented 3 tokens of framing; the reply is primed with 3 more.
 */
import { countTokens as countCl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as countO200k } from "gpt-tokenizer/encoding/o200k_base";
import type { Message } from "../../common/canonical/types.ts";

export interface TokenCounter {
  /** `text`'s tokens. */
  text(text: string): number;
  /** A message list's tokens as a chat request counts them. */
  messages(messages: readonly Message[]): number;
}

const PER_MESSAGE = 3;
const REPLY_PRIMING = 3;

/** The counter for a cloud model. */
export function tokenCounterFor(model: string): TokenCounter {
  const text = /^(gpt-3\.5|gpt-4(?!o|\.\d)|text-embedding-(ada|3))/.test(model.replace(/^[^/]+\//, "")) ? countCl100k : countO200k;
  return {
    text: (t) => (t === "" ? 0 : text(t)),
    messages: (messages) => messages.reduce((sum, m) => sum + PER_MESSAGE + text(messageText(m)), messages.length > 0 ? REPLY_PRIMING : 0),
  };
}

/** The text a message carries for counting and summarizing: its content, tool calls (name and arguments) and tool results. */
export function messageText(m: Message): string {
  const content = m.content;
  const text = typeof content === "string" ? content : content === null ? "" : content.map((p) => ("text" in p ? p.text : "")).join("\n");
  if (m.role === "assistant" && m.toolCalls && m.toolCalls.length > 0)
    return [text, ...m.toolCalls.map((c) => `${c.name}(${c.arguments})`)].filter(Boolean).join("\n");
  return text;
}
