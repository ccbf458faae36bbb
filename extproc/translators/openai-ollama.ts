/** OpenAI-speaking client → Ollama's native API (`/api/chat`, `/api/embed`). */
import type { ChatRequest, EmbeddingsRequest } from "../../common/canonical/types.ts";
import { ollamaBackend, ollamaEmbeddingsBackend } from "./backends/ollama.ts";
import { openaiClient } from "./clients/openai.ts";
import type { BackendContext } from "./codec.ts";
import { composeChat, composeEmbeddings, type CallPlan } from "./compose.ts";

export const planOpenAIToOllama = (req: ChatRequest, ctx: BackendContext): CallPlan => composeChat(openaiClient, ollamaBackend, req, ctx);

export const planOpenAIToOllamaEmbeddings = (req: EmbeddingsRequest, ctx: BackendContext): CallPlan => composeEmbeddings(ollamaEmbeddingsBackend, req, ctx);
