/** Anthropic-speaking client (`/v1/messages`) → OpenAI-compatible backend (Azure included). */
import type { ChatRequest } from "../../common/canonical/types.ts";
import { openaiChatBackend } from "./backends/openai.ts";
import { anthropicClient } from "./clients/anthropic.ts";
import type { BackendContext, ChatBackend } from "./codec.ts";
import { composeChat, type CallPlan } from "./compose.ts";
import type { OpenAIRoute } from "./openai-openai.ts";

export function planAnthropicToOpenAI(req: ChatRequest, ctx: BackendContext, route: OpenAIRoute): CallPlan {
  const backend: ChatBackend = { ...openaiChatBackend, request: (r, c) => ({ ...openaiChatBackend.request(r, c), path: route.path }) };
  // `extra` holds Anthropic-only fields (top_k, thinking…): an OpenAI backend would reject them.
  return composeChat(anthropicClient, backend, { ...req, extra: {} }, ctx);
}
