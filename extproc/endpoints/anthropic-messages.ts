/** `POST /v1/messages`, Anthropic's Messages API, for apps that speak Anthropic. */
import { ok } from "../../common/result.ts";
import { parseAnthropicMessagesRequest } from "../../common/schemas/anthropic-messages-request.ts";
import type { JsonObject } from "../../common/schemas/fields.ts";
import { planChat } from "../translators/select.ts";
import type { EndpointSpec } from "./spec.ts";

export const anthropicMessagesEndpoint: EndpointSpec = {
  name: "messages",
  path: "/v1/messages",
  method: "POST",
  parse(json) {
    const parsed = parseAnthropicMessagesRequest(json);
    if (!parsed.ok) return parsed;
    const req = parsed.value;
    return ok({
      call: { endpoint: "chat", request: req },
      model: req.model,
      stream: req.stream,
      plan: (provider, ctx) => planChat("anthropic", provider, req, json as JsonObject, ctx),
    });
  },
};
