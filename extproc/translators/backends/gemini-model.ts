/**
 * Gemini model names and paths. Providers are configured with the base URL
 * `https://generativelanguage.googleapis.com/v1beta`; every Gemini call is a method on a model
 * resource below it: `/models/{model}:{method}`.
 */
import type { Headers } from "../translator.ts";

/** The Gemini API's model methods Gearbox calls. */
export type GeminiMethod = "generateContent" | "streamGenerateContent" | "embedContent" | "batchEmbedContents";

/** Only the content type: credentials (`x-goog-api-key`) are added by the provider layer. */
export const GEMINI_HEADERS: Readonly<Headers> = { "content-type": "application/json" };

/** The bare model id: `models/gemini-2.5-flash` and `gemini-2.5-flash` both give `gemini-2.5-flash`. */
export function geminiModelId(model: string): string {
  return model.startsWith("models/") ? model.slice("models/".length) : model;
}

/** `/models/{model}:{method}` with the model id URL-encoded; streaming asks for SSE (`alt=sse`). */
export function geminiModelPath(model: string, method: GeminiMethod): string {
  const path = `/models/${encodeURIComponent(geminiModelId(model))}:${method}`;
  return method === "streamGenerateContent" ? `${path}?alt=sse` : path;
}

/**
 * Gemini 1.x and 2.x. Later models (Gemini 3 on) validate thought signatures on function calls
 * and take `thinkingLevel` rather than `thinkingBudget`; names that do not say 1.x or 2.x
 * (`gemini-3-pro-preview`, `gemini-flash-latest`) are treated as the newer generation.
 */
export function isPreGemini3(model: string): boolean {
  return /(^|\/)gemini-[12]([.-]|$)/.test(model);
}
