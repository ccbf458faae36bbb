/**
 * Google's Gemini API (`generativelanguage.googleapis.com/v1beta`) as a Gearbox chat backend:
 * `POST /models/{model}:generateContent`, or `:streamGenerateContent?alt=sse` when streaming.
 * The parts live beside this file: `gemini-request.ts` (canonical → request body, with
 * `gemini-schema.ts` for JSON Schemas), `gemini-response.ts` and `gemini-candidate.ts`
 * (response → canonical), `gemini-stream.ts` (SSE → chunks, framed by `gemini-sse.ts`),
 * `gemini-function-calls.ts` (function calls, streamed ones included), `gemini-error.ts`
 * (Google errors), `gemini-embeddings.ts` (embeddings backend).
 */
import { fail } from "../../../common/result.ts";
import { isObject } from "../../../common/schemas/fields.ts";
import type { ChatBackend } from "../codec.ts";
import { geminiError, googleStatusError, statusOfGoogleError } from "./gemini-error.ts";
import { GEMINI_HEADERS, geminiModelPath } from "./gemini-model.ts";
import { toGeminiRequest } from "./gemini-request.ts";
import { parseGeminiResponse } from "./gemini-response.ts";
import { GeminiStreamDecoder } from "./gemini-stream.ts";
import { parseUpstreamJson } from "../upstream-json.ts";

export { geminiEmbeddingsBackend } from "./gemini-embeddings.ts";

/** Canonical chat ⇄ Gemini `generateContent` / `streamGenerateContent`. */
export const geminiBackend: ChatBackend = {
  request(req, ctx) {
    const body = toGeminiRequest(req, ctx.upstreamModel);
    const path = geminiModelPath(ctx.upstreamModel, req.stream ? "streamGenerateContent" : "generateContent");
    return { path, headers: { ...GEMINI_HEADERS }, body: Buffer.from(JSON.stringify(body)) };
  },
  response(body, _headers, ctx) {
    const parsed = parseUpstreamJson(body, "response body", "Gemini");
    if (!parsed.ok) return parsed;
    const json = parsed.value;
    if (isObject(json) && isObject(json.error)) return fail(googleStatusError(statusOfGoogleError(json.error), json.error));
    return parseGeminiResponse(json, ctx);
  },
  error: geminiError,
  stream(ctx) {
    return new GeminiStreamDecoder(ctx);
  },
};
