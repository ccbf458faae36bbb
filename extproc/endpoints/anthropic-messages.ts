/**
 * `POST /v1/messages`, Anthropic's Messages API, for apps that speak Anthropic. The body is parsed
 * for what routing, governance and caching need; what only Anthropic can run (server tools,
 * server-tool blocks in the history, …) does not stop the call: an Anthropic backend gets the
 * client's bytes unchanged, any other backend refuses it with a 400 naming the first such field.
 */
import { GatewayError } from "../../common/errors.ts";
import { ok } from "../../common/result.ts";
import { parseAnthropicMessages } from "../../common/schemas/anthropic-messages-request.ts";
import type { FieldError, JsonObject } from "../../common/schemas/fields.ts";
import type { Provider } from "../providers/provider.ts";
import { anthropicErrorBody } from "../translators/clients/anthropic-wire.ts";
import { backendProtocol, planChat } from "../translators/select.ts";
import type { EndpointSpec } from "./spec.ts";

export const anthropicMessagesEndpoint: EndpointSpec = {
  name: "messages",
  path: "/v1/messages",
  method: "POST",
  errorBody: (error) => Buffer.from(JSON.stringify(anthropicErrorBody(error))),
  parse(json) {
    const parsed = parseAnthropicMessages(json);
    if (!parsed.ok) return parsed;
    const { request: req, anthropicOnly } = parsed.value;
    return ok({
      call: { endpoint: "chat", request: req },
      model: req.model,
      stream: req.stream,
      plan: (provider, ctx) => {
        const [first] = anthropicOnly;
        if (first && backendProtocol(provider.kind) !== "anthropic") throw notExpressible(first, provider);
        return planChat("anthropic", provider, req, json as JsonObject, ctx);
      },
    });
  },
};

/** The 400 for a field only Anthropic can serve, on a call routed to another backend. */
export function notExpressible(field: FieldError, provider: Provider): GatewayError {
  return new GatewayError(
    400,
    "invalid_request_error",
    `${field.message} This call is routed to provider '${provider.name}' (${provider.kind}), which cannot express it; route the model to an Anthropic provider or drop the field.`,
    { param: field.param, code: "unsupported_on_backend" },
  );
}
