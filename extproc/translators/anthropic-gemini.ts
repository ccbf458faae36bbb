/** Anthropic-speaking client (`/v1/messages`) → Gemini backend. */
import type { ChatRequest } from "../../common/canonical/types.ts";
import { geminiBackend } from "./backends/gemini.ts";
import { anthropicClient } from "./clients/anthropic.ts";
import type { BackendContext } from "./codec.ts";
import { composeChat, type CallPlan } from "./compose.ts";

export const planAnthropicToGemini = (req: ChatRequest, ctx: BackendContext): CallPlan => composeChat(anthropicClient, geminiBackend, req, ctx);
