/** Anthropic-speaking client (`/v1/messages`) → Ollama backend. */
import type { ChatRequest } from "../../common/canonical/types.ts";
import { ollamaBackend } from "./backends/ollama.ts";
import { anthropicClient } from "./clients/anthropic.ts";
import type { BackendContext } from "./codec.ts";
import { composeChat, type CallPlan } from "./compose.ts";

export const planAnthropicToOllama = (req: ChatRequest, ctx: BackendContext): CallPlan => composeChat(anthropicClient, ollamaBackend, req, ctx);
