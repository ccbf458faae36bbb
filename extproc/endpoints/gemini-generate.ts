/**
 * Gemini's `POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent?alt=sse`,
 * for apps on Google's SDKs (`@google/genai`), on every backend: the model and the streaming come
 * from the path; the body is parsed into the canonical chat request
 * (`translators/clients/gemini-request.ts`) and the answer written in Gemini's schema. Errors,
 * Gearbox's own 400s included, are in Google's shape (`{error: {code, message, status}}`).
 */
import { ok } from "../../common/result.ts";
import type { JsonObject } from "../../common/schemas/fields.ts";
import { geminiErrorBody } from "../translators/clients/gemini.ts";
import { parseGeminiGenerateRequest } from "../translators/clients/gemini-request.ts";
import { planChat } from "../translators/select.ts";
import type { EndpointSpec } from "./spec.ts";

/** `/v1beta/models/{model}:{method}` (also `/v1/…`); the model id may be URL-encoded. */
const GEMINI_PATH = /^\/v1(?:beta)?\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

export const GEMINI_ENDPOINT_NAME = "gemini_generate_content";

/** The spec for a Gemini generate path, or undefined for any other path. */
export function geminiGenerateEndpoint(path: string): EndpointSpec | undefined {
  const match = GEMINI_PATH.exec(path);
  if (!match) return undefined;
  let model: string;
  try {
    model = decodeURIComponent(match[1] ?? "");
  } catch {
    return undefined;
  }
  const stream = match[2] === "streamGenerateContent";
  return {
    name: GEMINI_ENDPOINT_NAME,
    path,
    method: "POST",
    errorBody: geminiErrorBody,
    parse(json) {
      const parsed = parseGeminiGenerateRequest(json, model, stream);
      if (!parsed.ok) return parsed;
      const req = parsed.value;
      return ok({
        call: { endpoint: "chat", request: req },
        model: req.model,
        stream,
        plan: (provider, ctx) => planChat("gemini", provider, req, json as JsonObject, ctx),
      });
    },
  };
}
