/**
 * What the Ollama engine reports about a model, worked out from the server's `/api/show` and
 * `/api/ps` answers (either may be missing) and the spec. Pure functions, tested alone.
 *
 * Context length, first match wins:
 * 1. `spec.contextLength`, capped at the model's trained length (`<arch>.context_length` in
 *    `model_info`); the engine then sends it as `options.num_ctx` on every request, so the server
 *    allocates exactly what is reported;
 * 2. `context_length` of the running model in `/api/ps` (what the server really allocated: its
 *    default depends on VRAM and `OLLAMA_CONTEXT_LENGTH`, see Ollama's `docs/context-length.mdx`);
 * 3. a `num_ctx` parameter in the model's Modelfile (`parameters` in `/api/show`);
 * 4. the trained length capped at 4096, the smallest default the docs list ("< 24 GiB VRAM: 4k").
 *    Reporting less than the server may allow only makes the overflow check stricter.
 */
import type { ChatTurn, ModelInfo, ModelSpec } from "./engine.ts";

/** Context length assumed when nothing better is known (Ollama's smallest documented default). */
export const DEFAULT_OLLAMA_CONTEXT = 4096;

/** The parts of an `/api/show` answer the engine reads (loosely typed: older servers omit fields). */
export interface OllamaShowFacts {
  model_info?: unknown;
  capabilities?: unknown;
  parameters?: unknown;
}

/** The parts of an `/api/ps` entry the engine reads. */
export interface OllamaRunningFacts {
  size?: unknown;
  context_length?: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function positiveInteger(value: unknown): number | undefined {
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined;
}

/** A `<architecture>.<key>` number from `model_info`, e.g. `llama.context_length`. */
export function modelInfoNumber(show: OllamaShowFacts | undefined, key: string): number | undefined {
  const info = show?.model_info;
  if (!isRecord(info)) return undefined;
  const arch = info["general.architecture"];
  if (typeof arch === "string") return positiveInteger(info[`${arch}.${key}`]);
  const entry = Object.entries(info).find(([name]) => name.endsWith(`.${key}`));
  return entry ? positiveInteger(entry[1]) : undefined;
}

/** `num_ctx` from the Modelfile parameters text (`"num_ctx                        8192\n…"`). */
function modelfileNumCtx(show: OllamaShowFacts | undefined): number | undefined {
  if (typeof show?.parameters !== "string") return undefined;
  const match = /^num_ctx\s+(\d+)\s*$/m.exec(show.parameters);
  return match?.[1] === undefined ? undefined : positiveInteger(Number(match[1]));
}

/** The `num_ctx` to send with every request: only when the spec asks for a size. */
export function requestedNumCtx(spec: ModelSpec, show: OllamaShowFacts | undefined): number | undefined {
  if (spec.contextLength === undefined) return undefined;
  const trained = modelInfoNumber(show, "context_length");
  return trained === undefined ? spec.contextLength : Math.min(spec.contextLength, trained);
}

/** The context length to report (see the module comment for the order). */
export function contextLengthOf(spec: ModelSpec, show: OllamaShowFacts | undefined, running: OllamaRunningFacts | undefined): number {
  const requested = requestedNumCtx(spec, show);
  if (requested !== undefined) return requested;
  const allocated = positiveInteger(running?.context_length) ?? modelfileNumCtx(show);
  if (allocated !== undefined) return allocated;
  const trained = modelInfoNumber(show, "context_length");
  return trained === undefined ? DEFAULT_OLLAMA_CONTEXT : Math.min(trained, DEFAULT_OLLAMA_CONTEXT);
}

/**
 * Chat and embedding support from `capabilities` (`"completion"`, `"embedding"`). A server that
 * does not list them (before ~0.6) gets both: a request it cannot serve fails as `unsupported`.
 */
export function capabilitiesOf(show: OllamaShowFacts | undefined): ModelInfo["capabilities"] {
  const caps = show?.capabilities;
  if (!Array.isArray(caps)) return { chat: true, embeddings: true };
  return { chat: caps.includes("completion"), embeddings: caps.includes("embedding") };
}

/** The model's `ModelInfo` from what the server said. */
export function ollamaModelInfo(spec: ModelSpec, show: OllamaShowFacts | undefined, running: OllamaRunningFacts | undefined): ModelInfo {
  const capabilities = capabilitiesOf(show);
  const embeddingLength = capabilities.embeddings && Array.isArray(show?.capabilities) ? modelInfoNumber(show, "embedding_length") : undefined;
  const memoryBytes = positiveInteger(running?.size);
  return {
    id: spec.id,
    engine: "ollama",
    source: spec.source,
    contextLength: contextLengthOf(spec, show, running),
    capabilities,
    ...(embeddingLength !== undefined && { embeddingLength }),
    ...(memoryBytes !== undefined && { memoryBytes }),
  };
}

/** Bytes of text per token the estimate assumes: fewer than the ~4 of English with Llama-3-class BPE, so it over-counts. */
export const ESTIMATE_BYTES_PER_TOKEN = 3;
/** Template tokens per message (Llama 3: `<|start_header_id|>`, role, `<|end_header_id|>`, `\n\n`, `<|eot_id|>`). */
export const ESTIMATE_TOKENS_PER_MESSAGE = 5;
/** BOS and the assistant header that opens the answer. */
export const ESTIMATE_PRIMING_TOKENS = 5;

/** Tokens a text takes by the byte estimate (at least 1 for non-empty text). */
export function estimateTextTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, "utf8") / ESTIMATE_BYTES_PER_TOKEN);
}

/**
 * Ollama has no tokenize endpoint, so prompt size is estimated: UTF-8 bytes / 3 per message, plus
 * the template's tokens. It errs high (English runs ~4 bytes per token), so the overflow check
 * refuses a borderline prompt rather than letting Ollama silently drop part of it (its
 * `chatPrompt` in `server/prompt.go` removes the oldest messages until the prompt fits, instead of
 * failing).
 */
export function estimatePromptTokens(messages: readonly ChatTurn[]): number {
  return messages.reduce((sum, m) => sum + estimateTextTokens(m.content) + ESTIMATE_TOKENS_PER_MESSAGE, ESTIMATE_PRIMING_TOKENS);
}
