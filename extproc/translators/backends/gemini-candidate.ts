/**
 * Reading Gemini `GenerateContentResponse` pieces, shared by the complete-response and stream
 * decoders: one candidate's parts, its finish reason, prompt blocks, usage and log probabilities.
 *
 * Parts: `text` → content; `text` with `thought: true` → reasoning; `functionCall` → tool calls;
 * `executableCode` / `codeExecutionResult` (Gemini's server-side code tool) → content, as fenced
 * Markdown blocks, so the answer that refers to them still reads; a function call's
 * `thoughtSignature` goes with the call into its id (`gemini-call-id.ts`), other parts' are dropped; `inlineData` / `fileData` (generated images) have no place in the
 * canonical message and are dropped.
 *
 * Finish reasons: `STOP` → `stop` (`tool_calls` when the candidate called functions);
 * `MAX_TOKENS` → `length`; `SAFETY`, `RECITATION`, `BLOCKLIST`, `PROHIBITED_CONTENT`, `SPII`,
 * `LANGUAGE` and the `IMAGE_*` filters → `content_filter` with a refusal text saying why; every
 * other value (`OTHER`, `MALFORMED_FUNCTION_CALL`, `UNEXPECTED_TOOL_CALL`, `NO_IMAGE`, values
 * added later) → `stop`, but a candidate that ends that way with no output at all is a failed
 * generation: a 502 naming the reason and Gemini's `finishMessage`, never an empty success.
 */
import type { FinishReason, Usage } from "../../../common/canonical/types.ts";
import { GatewayError } from "../../../common/errors.ts";
import { isObject, type JsonObject } from "../../../common/schemas/fields.ts";
import { upstreamMalformed } from "../upstream-json.ts";

/** What one candidate (or one streamed slice of it) carries. */
export interface CandidateSlice {
  index: number;
  text: string;
  reasoning: string;
  /** `functionCall` objects, in order, with their part's `thoughtSignature` when it had one. */
  calls: JsonObject[];
  finishReason?: string;
  finishMessage?: string;
  /** Safety categories Gemini marked `blocked`. */
  blocked: string[];
  logprobs?: unknown;
}

/** How a Gemini finish reason ends a canonical choice. */
export interface FinishMapping {
  finishReason: FinishReason;
  /** A content filter stopped the candidate: say why in a refusal. */
  filtered: boolean;
  /** Not a normal end: with no output, the generation failed. */
  abnormal: boolean;
}

const FILTER_REASONS: Readonly<Record<string, string>> = {
  SAFETY: "the output was flagged as potentially unsafe",
  RECITATION: "the output may recite protected material",
  BLOCKLIST: "the output contained blocklisted terms",
  PROHIBITED_CONTENT: "the output may contain prohibited content",
  SPII: "the output may contain sensitive personal information",
  LANGUAGE: "the output language is not supported",
  IMAGE_SAFETY: "a generated image was flagged as potentially unsafe",
  IMAGE_PROHIBITED_CONTENT: "a generated image may contain prohibited content",
  IMAGE_RECITATION: "a generated image may recite protected material",
};

const BLOCK_REASONS: Readonly<Record<string, string>> = {
  SAFETY: "it was flagged as potentially unsafe",
  BLOCKLIST: "it contains blocklisted terms",
  PROHIBITED_CONTENT: "it may contain prohibited content",
  IMAGE_SAFETY: "an image in it was flagged as potentially unsafe",
  MODEL_ARMOR: "Model Armor flagged it",
  JAILBREAK: "it looks like a jailbreak attempt",
};

/** The value if it is a string. */
export const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
/** The value if it is a finite number. */
export const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/** Reads one candidate; `position` is its place in the array, used when it has no `index`. */
export function readCandidate(raw: JsonObject, position: number): CandidateSlice {
  const slice: CandidateSlice = { index: num(raw.index) ?? position, text: "", reasoning: "", calls: [], blocked: blockedCategories(raw.safetyRatings) };
  const content = isObject(raw.content) ? raw.content : {};
  for (const part of Array.isArray(content.parts) ? content.parts : []) {
    if (!isObject(part)) continue;
    if (typeof part.text === "string") {
      if (part.thought === true) slice.reasoning += part.text;
      else slice.text += part.text;
    } else if (isObject(part.functionCall)) {
      // The signature sits on the part; the call carries it on (see `gemini-call-id.ts`).
      slice.calls.push(
        typeof part.thoughtSignature === "string" ? Object.assign({}, part.functionCall, { thoughtSignature: part.thoughtSignature }) : part.functionCall,
      );
    } else if (isObject(part.executableCode))
      slice.text += fenced(str(part.executableCode.code) ?? "", (str(part.executableCode.language) ?? "").toLowerCase());
    else if (isObject(part.codeExecutionResult)) slice.text += fenced(str(part.codeExecutionResult.output) ?? "", "");
  }
  const finishReason = str(raw.finishReason);
  const finishMessage = str(raw.finishMessage);
  if (finishReason !== undefined) slice.finishReason = finishReason;
  if (finishMessage !== undefined) slice.finishMessage = finishMessage;
  const logprobs = toOpenAILogprobs(raw.logprobsResult);
  if (logprobs !== undefined) slice.logprobs = logprobs;
  return slice;
}

function fenced(body: string, language: string): string {
  return `\n\`\`\`${language}\n${body.endsWith("\n") ? body : `${body}\n`}\`\`\`\n`;
}

function blockedCategories(ratings: unknown): string[] {
  if (!Array.isArray(ratings)) return [];
  return ratings.filter((r): r is JsonObject => isObject(r) && r.blocked === true).map((r) => str(r.category) ?? "UNKNOWN_CATEGORY");
}

/** Maps a Gemini finish reason (see the module comment); `undefined` counts as abnormal. */
export function mapFinish(reason: string | undefined, calledFunctions: boolean): FinishMapping {
  const stop: FinishReason = calledFunctions ? "tool_calls" : "stop";
  if (reason === "STOP") return { finishReason: stop, filtered: false, abnormal: false };
  if (reason === "MAX_TOKENS") return { finishReason: "length", filtered: false, abnormal: false };
  if (reason !== undefined && reason in FILTER_REASONS) return { finishReason: "content_filter", filtered: true, abnormal: false };
  return { finishReason: stop, filtered: false, abnormal: true };
}

/** The refusal text for a candidate a content filter stopped. */
export function finishRefusal(slice: Pick<CandidateSlice, "finishReason" | "finishMessage" | "blocked">): string {
  const reason = slice.finishReason ?? "UNKNOWN";
  return sentence(`Gemini stopped the response (${reason}): ${FILTER_REASONS[reason] ?? "a content filter stopped it"}.`, slice.blocked, slice.finishMessage);
}

/** The refusal text for a blocked prompt (`promptFeedback`). */
export function promptRefusal(feedback: JsonObject): string {
  const reason = str(feedback.blockReason);
  const why = reason === undefined ? "" : `: ${BLOCK_REASONS[reason] ?? "no further reason given"}`;
  return sentence(
    `Gemini blocked the prompt (${reason ?? "no reason given"})${why}.`,
    blockedCategories(feedback.safetyRatings),
    str(feedback.blockReasonMessage),
  );
}

function sentence(head: string, blocked: string[], message: string | undefined): string {
  const categories = blocked.length > 0 ? ` Blocked categories: ${blocked.join(", ")}.` : "";
  return `${head}${categories}${message ? ` ${message}` : ""}`;
}

/** True when the body blocks the prompt: no candidates, and `promptFeedback` says why. */
export function isPromptBlock(json: JsonObject): json is JsonObject & { promptFeedback: JsonObject } {
  const none = !Array.isArray(json.candidates) || json.candidates.length === 0;
  return none && isObject(json.promptFeedback) && (json.promptFeedback.blockReason !== undefined || json.promptFeedback.blockReasonMessage !== undefined);
}

/** A generation that ended abnormally with no output, as the error the client gets. */
export function noContentError(slice: Pick<CandidateSlice, "finishReason" | "finishMessage">): GatewayError {
  const reason = slice.finishReason ?? "no finishReason";
  const detail = slice.finishMessage ? `: ${slice.finishMessage}` : "";
  return new GatewayError(502, "upstream_error", `Gemini returned no content (${reason})${detail}`, { code: slice.finishReason ?? "NO_CONTENT" });
}

/** A body that is not a `GenerateContentResponse` at all. */
export function notAResponse(what: string): GatewayError {
  return upstreamMalformed(`Gemini sent ${what}, not a GenerateContentResponse`);
}

/**
 * `usageMetadata` → canonical usage. Input = `promptTokenCount` + `toolUsePromptTokenCount`
 * (both billed as input); output = `candidatesTokenCount` + `thoughtsTokenCount` (thinking is
 * billed as output; `reasoningTokens` says how much of it); cached = `cachedContentTokenCount`
 * (part of the prompt count). `totalTokenCount` is kept as Gemini reports it.
 */
export function parseGeminiUsage(raw: unknown): Usage | undefined {
  if (!isObject(raw)) return undefined;
  const prompt = num(raw.promptTokenCount);
  const total = num(raw.totalTokenCount);
  if (prompt === undefined && total === undefined) return undefined;
  const thoughts = num(raw.thoughtsTokenCount);
  const input = (prompt ?? 0) + (num(raw.toolUsePromptTokenCount) ?? 0);
  const output = (num(raw.candidatesTokenCount) ?? 0) + (thoughts ?? 0);
  const usage: Usage = { inputTokens: input, outputTokens: output, totalTokens: total ?? input + output };
  const cached = num(raw.cachedContentTokenCount);
  if (cached !== undefined) usage.cachedInputTokens = cached;
  if (thoughts !== undefined) usage.reasoningTokens = thoughts;
  return usage;
}

/** `logprobsResult` → OpenAI's `{content: [{token, logprob, bytes, top_logprobs}], refusal: null}`. */
export function toOpenAILogprobs(raw: unknown): unknown {
  if (!isObject(raw) || !Array.isArray(raw.chosenCandidates)) return undefined;
  const top = Array.isArray(raw.topCandidates) ? raw.topCandidates : [];
  const entry = (c: JsonObject): JsonObject => {
    const token = str(c.token) ?? "";
    return { token, logprob: num(c.logProbability) ?? 0, bytes: [...Buffer.from(token, "utf8")] };
  };
  const content = raw.chosenCandidates.filter(isObject).map((chosen, i) => {
    const alternatives = isObject(top[i]) && Array.isArray(top[i].candidates) ? top[i].candidates.filter(isObject) : [];
    return Object.assign({}, entry(chosen), { top_logprobs: alternatives.map(entry) });
  });
  return { content, refusal: null };
}
