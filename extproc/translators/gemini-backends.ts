/**
 * Gemini client (`/v1beta/models/{model}:generateContent`, `:streamGenerateContent`) → every
 * backend: the request is canonical (`clients/gemini-request.ts`), each backend codec writes its
 * own wire format, and the Gemini client codec writes the answer back. A Gemini backend gets a
 * request rebuilt from canonical (thought signatures and call ids kept), not the client's bytes.
 */
import type { ChatRequest } from "../../common/canonical/types.ts";
import { anthropicBackend } from "./backends/anthropic.ts";
import { geminiBackend } from "./backends/gemini.ts";
import { ollamaBackend } from "./backends/ollama.ts";
import { openaiChatBackend } from "./backends/openai.ts";
import { geminiClient } from "./clients/gemini.ts";
import type { BackendContext, ChatBackend } from "./codec.ts";
import { composeChat, type CallPlan } from "./compose.ts";
import type { OpenAIRoute } from "./openai-openai.ts";

// `extra` holds Gemini-only fields (safetySettings…): other backends would reject them.
const bare = (req: ChatRequest): ChatRequest => ({ ...req, extra: {} });

export function planGeminiToOpenAI(req: ChatRequest, ctx: BackendContext, route: OpenAIRoute): CallPlan {
  const backend: ChatBackend = { ...openaiChatBackend, request: (r, c) => ({ ...openaiChatBackend.request(r, c), path: route.path }) };
  return composeChat(geminiClient, backend, bare(req), ctx);
}
export const planGeminiToAnthropic = (req: ChatRequest, ctx: BackendContext): CallPlan => composeChat(geminiClient, anthropicBackend, bare(req), ctx);
export const planGeminiToGemini = (req: ChatRequest, ctx: BackendContext): CallPlan => composeChat(geminiClient, geminiBackend, bare(req), ctx);
export const planGeminiToOllama = (req: ChatRequest, ctx: BackendContext): CallPlan => composeChat(geminiClient, ollamaBackend, bare(req), ctx);
