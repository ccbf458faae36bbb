/** `POST /v1/chat/completions`, OpenAI's Chat Completions API. */
import { ok } from "../../common/result.ts";
import type { JsonObject } from "../../common/schemas/fields.ts";
import { parseOpenAIChatRequest } from "../../common/schemas/openai-chat-request.ts";
import { planChat } from "../translators/select.ts";
import type { EndpointSpec } from "./spec.ts";

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
      plan: (provider, ctx) => planChat("openai", provider, req, json as JsonObject, ctx),
    });
  },
};
