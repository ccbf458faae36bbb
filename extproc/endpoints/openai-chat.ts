/** `POST /v1/chat/completions`, OpenAI's Chat Completions API. */
import type { ChatRequest } from "../canonical/types.ts";
import type { Provider } from "../providers/provider.ts";
import { ok } from "../result.ts";
import { parseOpenAIChatRequest } from "../schemas/openai-chat-request.ts";
import { openaiToOpenAIChat, openaiToOpenAIChatForcedUsage } from "../translators/openai-openai.ts";
import type { TranslateContext, Translator } from "../translators/translator.ts";
import { planWith, type EndpointSpec } from "./spec.ts";

function chatTranslator(provider: Provider, req: ChatRequest, ctx: TranslateContext): Translator<ChatRequest> {
  switch (provider.kind) {
    case "openai":
    case "openai-compatible":
      return ctx.forceStreamUsage && req.stream && req.includeUsage !== true ? openaiToOpenAIChatForcedUsage : openaiToOpenAIChat;
    default:
      return provider.kind satisfies never;
  }
}

export const openaiChatEndpoint: EndpointSpec = {
  name: "chat_completions",
  path: "/v1/chat/completions",
  method: "POST",
  parse(json) {
    const parsed = parseOpenAIChatRequest(json);
    if (!parsed.ok) return parsed;
    const req = parsed.value;
    return ok({
      call: { endpoint: "chat", request: req },
      model: req.model,
      stream: req.stream,
      plan: (provider, ctx) => planWith(chatTranslator(provider, req, ctx), req, ctx),
    });
  },
};
