/** OpenAI-speaking client → Gemini (`generateContent`, `streamGenerateContent?alt=sse`, embeddings). */
import type { ChatRequest, EmbeddingsRequest } from "../../common/canonical/types.ts";
import { geminiBackend, geminiEmbeddingsBackend } from "./backends/gemini.ts";
import { openaiClient } from "./clients/openai.ts";
import type { BackendContext } from "./codec.ts";
import { composeChat, composeEmbeddings, type CallPlan } from "./compose.ts";

export const planOpenAIToGemini = (req: ChatRequest, ctx: BackendContext): CallPlan => composeChat(openaiClient, geminiBackend, req, ctx);

export const planOpenAIToGeminiEmbeddings = (req: EmbeddingsRequest, ctx: BackendContext): CallPlan => composeEmbeddings(geminiEmbeddingsBackend, req, ctx);
