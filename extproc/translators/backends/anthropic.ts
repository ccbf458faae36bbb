/**
 * Canonical chat ⇄ the Anthropic Messages API, as a backend codec: `POST /messages` below the
 * provider's base path (`https://api.anthropic.com/v1`), `anthropic-version: 2023-06-01`.
 * Credentials (`x-api-key`) are the provider's business, not the codec's.
 *
 * The mapping decisions are documented where they are made: requests in `anthropic-request.ts`
 * and `anthropic-messages.ts`, responses in `anthropic-response.ts`, streams in
 * `anthropic-stream.ts`, errors in `anthropic-error.ts`.
 */
import type { ChatBackend } from "../codec.ts";
import { anthropicError } from "./anthropic-error.ts";
import { toAnthropicRequest } from "./anthropic-request.ts";
import { parseAnthropicMessage } from "./anthropic-response.ts";
import { AnthropicStreamDecoder } from "./anthropic-stream.ts";
import { ANTHROPIC_MESSAGES_PATH, ANTHROPIC_VERSION } from "./anthropic-wire.ts";

/** The request defaults, re-exported for callers of the backend. */
export { ANTHROPIC_DEFAULT_MAX_TOKENS, ANTHROPIC_MAX_TEMPERATURE } from "./anthropic-request.ts";

/** Canonical chat → Anthropic Messages and back. `request` throws a 400 `GatewayError` for what Anthropic cannot take. */
export const anthropicBackend: ChatBackend = {
  request(req, ctx) {
    const body = toAnthropicRequest(req, ctx);
    return {
      path: ANTHROPIC_MESSAGES_PATH,
      headers: { "content-type": "application/json", "anthropic-version": ANTHROPIC_VERSION },
      body: Buffer.from(JSON.stringify(body)),
    };
  },
  response: (body, _headers, ctx) => parseAnthropicMessage(body, ctx.upstreamModel),
  error: anthropicError,
  stream: (ctx) => new AnthropicStreamDecoder(ctx),
};
