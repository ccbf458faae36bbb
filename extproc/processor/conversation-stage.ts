/**
 * The conversation's part as the processor shows it: which client APIs keep conversations, and
 * the `x-gearbox-conversation` response header (tokens of the whole history, of what was sent,
 * of the summary, and how many stored messages the summary stood for).
 */
import type { ConversationApi, ConversationStats } from "../conversation/conversations.ts";
import type { Headers } from "./outcome.ts";

export const CONVERSATION_RESPONSE_HEADER = "x-gearbox-conversation";

/** The schema a conversation request's body is rewritten in; undefined → the endpoint keeps none (embeddings). */
export function conversationApi(endpoint: string): ConversationApi | undefined {
  return endpoint === "chat_completions" ? "openai" : endpoint === "messages" ? "anthropic" : undefined;
}

export function conversationHeader(stats: ConversationStats): Headers {
  const parts = [`history=${stats.historyTokens}`, `sent=${stats.sentTokens}`, `summary=${stats.summaryTokens}`, `summarized=${stats.summarized}`];
  if (stats.degraded) parts.push("store=unavailable");
  return { [CONVERSATION_RESPONSE_HEADER]: parts.join("; ") };
}
