/**
 * OpenAI Responses client (`/v1/responses`) → every backend: the request is canonical (parsed by
 * `openai-responses-request.ts`), each backend codec writes its own wire format (Chat
 * Completions for OpenAI-compatible providers), and the Responses client codec writes the
 * answer back. `client` is per call: it carries the response id and the store hook.
 */
import type { ChatRequest } from "../../common/canonical/types.ts";
import { anthropicBackend } from "./backends/anthropic.ts";
import { geminiBackend } from "./backends/gemini.ts";
import { ollamaBackend } from "./backends/ollama.ts";
import { openaiChatBackend } from "./backends/openai.ts";
import type { BackendContext, ChatBackend, ChatClient } from "./codec.ts";
import { composeChat, type CallPlan } from "./compose.ts";
import type { OpenAIRoute } from "./openai-openai.ts";

// `extra` holds Responses-only fields (store, include, truncation…): no backend takes them.
const bare = (req: ChatRequest): ChatRequest => ({ ...req, extra: {} });

export function planResponsesToOpenAI(client: ChatClient, req: ChatRequest, ctx: BackendContext, route: OpenAIRoute): CallPlan {
  const backend: ChatBackend = { ...openaiChatBackend, request: (r, c) => ({ ...openaiChatBackend.request(r, c), path: route.path }) };
  return composeChat(client, backend, bare(req), ctx);
}

export const planResponsesToAnthropic = (client: ChatClient, req: ChatRequest, ctx: BackendContext): CallPlan =>
  composeChat(client, anthropicBackend, bare(req), ctx);
export const planResponsesToGemini = (client: ChatClient, req: ChatRequest, ctx: BackendContext): CallPlan =>
  composeChat(client, geminiBackend, bare(req), ctx);
export const planResponsesToOllama = (client: ChatClient, req: ChatRequest, ctx: BackendContext): CallPlan =>
  composeChat(client, ollamaBackend, bare(req), ctx);
