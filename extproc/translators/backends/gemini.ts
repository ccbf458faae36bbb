/**
 * Google's Gemini API (`generativelanguage.googleapis.com/v1beta`) as a Gearbox chat backend:
 * `POST /models/{model}:generateContent`, or `:streamGenerateContent?alt=sse` when streaming.
 * The parts live beside this file: `gemini-request.ts` (canonical → request body, with
 * `gemini-schema.ts` for JSON Schemas), `gemini-response.ts` and `gemini-candidate.ts`
 * (response → canonical), `gemini-stream.ts` (SSE → chunks, framed by `gemini-sse.ts`),
 * `gemini-function-calls.ts` (function calls, streamed ones included), `gemini-error.ts`
 * (Google errors), `gemini-embeddings.ts` (embeddings backend).
 */
import { GatewayError } from "../../../common/errors.ts";
import { fail } from "../../../common/result.ts";
import { isObject } from "../../../common/schemas/fields.ts";
import type { ChatBackend } from "../codec.ts";
import { geminiError, googleStatusError, statusOfGoogleError } from "./gemini-error.ts";
import { GEMINI_HEADERS, geminiModelPath } from "./gemini-model.ts";
import { toGeminiRequest } from "./gemini-request.ts";
import { parseGeminiResponse } from "./gemini-response.ts";
import { GeminiStreamDecoder } from "./gemini-stream.ts";

export { geminiEmbeddingsBackend } from "./gemini-embeddings.ts";

/** Canonical chat ⇄ Gemini `generateContent` / `streamGenerateContent`. */
export const geminiBackend: ChatBackend = {
  request(req, ctx) {
    const body = toGeminiRequest(req, ctx.upstreamModel);
    const path = geminiModelPath(ctx.upstreamModel, req.stream ? "streamGenerateContent" : "generateContent");
    return { path, headers: { ...GEMINI_HEADERS }, body: Buffer.from(JSON.stringify(body)) };
  },
  response(body, _headers, ctx) {
    let json: unknown;
    try {
      json = JSON.parse(body.toString("utf8"));
    } catch (err) {
      return fail(new GatewayError(502, "upstream_error", "Gemini sent a response body that is not JSON.", { code: "invalid_upstream_response", cause: err }));
    }
    if (isObject(json) && isObject(json.error)) return fail(googleStatusError(statusOfGoogleError(json.error), json.error));
    return parseGeminiResponse(json, ctx);
  },
  error: geminiError,
  stream(ctx) {
    return new GeminiStreamDecoder(ctx);
  },
};
