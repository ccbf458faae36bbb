/** OpenAI-speaking client → Anthropic Messages backend. */
import type { ChatRequest } from "../../common/canonical/types.ts";
import { anthropicBackend } from "./backends/anthropic.ts";
import { openaiClient } from "./clients/openai.ts";
import type { BackendContext } from "./codec.ts";
import { composeChat, type CallPlan } from "./compose.ts";

export const planOpenAIToAnthropic = (req: ChatRequest, ctx: BackendContext): CallPlan => composeChat(openaiClient, anthropicBackend, req, ctx);
