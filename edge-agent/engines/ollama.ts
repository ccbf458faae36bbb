/**
 * The Ollama engine: models served by an Ollama server, driven through the official `ollama`
 * client. Nothing runs in this process; the engine only speaks Ollama's native API.
 *
 * - `load(spec)`: `spec.source` is the Ollama model name, `spec.host` the server's base URL
 *   (default `http://127.0.0.1:11434`). The model must already be on the server (`/api/tags`);
 *   the engine never pulls (gigabytes, and a deployment decision), it fails with `load_failed`
 *   and says `ollama pull <name>`. `/api/show` supplies capabilities, context and embedding
 *   sizes when the server has it. Then, unless `warm: false`, the model is loaded into the
 *   server's memory, the way Ollama's docs describe ("Load a model": a chat with no messages, or
 *   an embed with no input for an embedding-only model), so the first request does not pay for
 *   the load, and `/api/ps` tells the context really allocated and the memory used.
 * - Every request carries `keep_alive` (default `-1`: stay loaded until `unload()`), because
 *   Ollama resets a model's expiry to each request's value (5 minutes when absent).
 * - `chat()` streams `/api/chat` with `logprobs: true` (and `top_logprobs` when asked); the
 *   mapping to `ChatEvent`s, logprobs included, is in `ollama-stream.ts`.
 * - `countTokens()` estimates (Ollama has no tokenize endpoint): see `estimatePromptTokens`.
 * - `unload()` sends Ollama's documented unload request (no messages, `keep_alive: 0`). The
 *   server is shared: this also unloads the model for its other clients.
 * - Errors are `EngineError`s: `unavailable` when the server cannot be reached, answers 503, or
 *   no longer has the model (404); `unsupported` for a 400 (e.g. "does not support chat");
 *   `engine_crashed` for other server errors and for a stream that fails or stops early;
 *   `load_failed` when `load()` cannot use the model. An aborted `signal` makes the call throw
 *   the signal's reason at once, and the HTTP request is cancelled.
 */
import { Ollama, type AbortableAsyncIterator, type ChatRequest, type ChatResponse, type Options } from "ollama";
import { EngineError, type ChatEvent, type ChatParams, type ChatTurn, type Engine, type LoadedModel, type ModelInfo, type ModelSpec } from "./engine.ts";
import {
  estimatePromptTokens,
  estimateTextTokens,
  ollamaModelInfo,
  requestedNumCtx,
  type OllamaRunningFacts,
  type OllamaShowFacts,
} from "./ollama-model-info.ts";
import { OllamaStreamMapper } from "./ollama-stream.ts";

/** Ollama's default address. */
export const DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434";

/** Highest `top_logprobs` Ollama accepts (it answers 400 above). */
export const OLLAMA_MAX_TOP_LOGPROBS = 20;

/** Options of `createOllamaEngine`; all optional. */
export interface OllamaEngineOptions {
  /** Server used when a spec has no `host`. Default `DEFAULT_OLLAMA_HOST`. */
  host?: string;
  /** Load the model into the server's memory during `load()`. Default true. */
  warm?: boolean;
  /** `keep_alive` sent with every request (Ollama duration string or seconds; negative = forever). Default -1. */
  keepAlive?: string | number;
  /** The `fetch` the client uses (tests, proxies). Default: the global one. */
  fetch?: typeof fetch;
}

type Phase = "load" | "request" | "stream";

/** The HTTP status of the client's `ResponseError` (not exported by the package), if it is one. */
function statusOf(err: unknown): number | undefined {
  if (!(err instanceof Error) || err.name !== "ResponseError" || !("status_code" in err)) return undefined;
  return typeof err.status_code === "number" ? err.status_code : undefined;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Maps a client failure to an `EngineError` (see the module comment). */
export function toEngineError(err: unknown, phase: Phase, host: string): EngineError {
  if (err instanceof EngineError) return err;
  const status = statusOf(err);
  const detail = status === undefined ? messageOf(err) : `${status} ${messageOf(err)}`;
  const message = `Ollama at ${host}: ${detail}`;
  if (phase === "stream") return new EngineError(`${message} (the stream failed)`, "engine_crashed", { cause: err });
  if (status === undefined || status === 503) return new EngineError(message, "unavailable", { cause: err });
  if (phase === "load") return new EngineError(message, "load_failed", { cause: err });
  if (status === 404) return new EngineError(message, "unavailable", { cause: err });
  if (status === 400) return new EngineError(message, "unsupported", { cause: err });
  return new EngineError(message, "engine_crashed", { cause: err });
}

/** Whether a name from `/api/tags` is the wanted model (`llama3.2` is `llama3.2:latest`). */
function sameModel(listed: string, wanted: string): boolean {
  const tagged = (name: string) => (name.includes(":") ? name : `${name}:latest`);
  return tagged(listed) === tagged(wanted);
}

/** Runs `call`, turning its failure into an `EngineError`, or into the signal's reason once aborted. */
async function guarded<T>(call: () => Promise<T>, phase: Phase, host: string, signal: AbortSignal): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    throw toEngineError(err, phase, host);
  }
}

/** Runs `call`, mapping only a 404 (no such route on this server, or no such model) to `undefined`. */
async function optional<T>(call: () => Promise<T>, host: string, signal: AbortSignal): Promise<T | undefined> {
  try {
    return await call();
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    if (statusOf(err) === 404) return undefined;
    throw toEngineError(err, "load", host);
  }
}

/** Creates the engine. */
export function createOllamaEngine(options: OllamaEngineOptions = {}): Engine {
  const closing = new AbortController();
  const keepAlive = options.keepAlive ?? -1;
  const baseFetch = options.fetch ?? globalThis.fetch;

  /** A client whose every request is also cancelled by `signal` (the client takes no signal itself outside streams). */
  function client(host: string, signal: AbortSignal): Ollama {
    const bound: typeof fetch = (input, init) => baseFetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal });
    return new Ollama({ host, fetch: bound });
  }

  async function load(spec: ModelSpec): Promise<LoadedModel> {
    const host = spec.host ?? options.host ?? DEFAULT_OLLAMA_HOST;
    const name = spec.source;
    if (name.trim() === "") throw new EngineError(`Model '${spec.id}': an Ollama model needs a model name in 'source'.`, "load_failed");
    const signal = closing.signal;
    const ollama = client(host, signal);
    const listed = await guarded(() => ollama.list(), "load", host, signal);
    if (!listed.models.some((m) => sameModel(m.name, name) || sameModel(m.model, name))) {
      const have = listed.models.map((m) => m.name).join(", ") || "none";
      throw new EngineError(`Ollama at ${host} has no model '${name}' (it has: ${have}); pull it first: ollama pull ${name}`, "load_failed");
    }
    const show: OllamaShowFacts | undefined = await optional(() => ollama.show({ model: name }), host, signal);
    const numCtx = requestedNumCtx(spec, show);
    const requestOptions: Partial<Options> = numCtx === undefined ? {} : { num_ctx: numCtx };
    let info = ollamaModelInfo(spec, show, undefined);
    if (options.warm ?? true) {
      if (info.capabilities.chat)
        await guarded(() => ollama.chat({ model: name, messages: [], stream: false, keep_alive: keepAlive, options: requestOptions }), "load", host, signal);
      else await guarded(() => ollama.embed({ model: name, input: [], keep_alive: keepAlive, options: requestOptions }), "load", host, signal);
      const running = await optional(() => ollama.ps(), host, signal);
      const entry: OllamaRunningFacts | undefined = running?.models.find((m) => sameModel(m.name, name) || sameModel(m.model, name));
      info = ollamaModelInfo(spec, show, entry);
    }
    return new OllamaModel({ spec, host, name, info, keepAlive, requestOptions, client, closing: closing.signal });
  }

  return {
    kind: "ollama",
    load,
    close() {
      closing.abort(new EngineError("The Ollama engine was closed.", "unavailable"));
      return Promise.resolve();
    },
  };
}

interface OllamaModelSetup {
  spec: ModelSpec;
  host: string;
  name: string;
  info: ModelInfo;
  keepAlive: string | number;
  requestOptions: Partial<Options>;
  client: (host: string, signal: AbortSignal) => Ollama;
  closing: AbortSignal;
}

/** A model on an Ollama server. */
class OllamaModel implements LoadedModel {
  private current: ModelInfo;
  private unloaded = false;

  constructor(private readonly setup: OllamaModelSetup) {
    this.current = setup.info;
  }

  info(): ModelInfo {
    return { ...this.current, capabilities: { ...this.current.capabilities } };
  }

  countTokens(messages: ChatTurn[]): Promise<number> {
    return Promise.resolve(estimatePromptTokens(messages));
  }

  chat(params: ChatParams): AsyncIterable<ChatEvent> {
    return this.stream(params);
  }

  async embed(texts: string[], signal: AbortSignal): Promise<{ vectors: number[][]; promptTokens: number }> {
    const { host, name, keepAlive, requestOptions } = this.setup;
    const combined = this.signalFor(signal);
    if (texts.length === 0) return { vectors: [], promptTokens: 0 };
    const request = { model: name, input: texts, keep_alive: keepAlive, options: requestOptions };
    const answer: { embeddings?: unknown; prompt_eval_count?: number } = await guarded(
      () => this.setup.client(host, combined).embed(request),
      "request",
      host,
      combined,
    );
    const vectors = answer.embeddings;
    if (!Array.isArray(vectors) || vectors.length !== texts.length || !vectors.every(isNumberArray)) {
      throw new EngineError(`Ollama at ${host} answered an embed of ${texts.length} input(s) without ${texts.length} vector(s).`, "engine_crashed");
    }
    if (this.current.embeddingLength === undefined && vectors[0] !== undefined) this.current = { ...this.current, embeddingLength: vectors[0].length };
    const promptTokens = answer.prompt_eval_count ?? texts.reduce((sum, text) => sum + Math.max(1, estimateTextTokens(text)), 0);
    return { vectors, promptTokens };
  }

  async unload(): Promise<void> {
    if (this.unloaded) return;
    this.unloaded = true;
    const { host, name } = this.setup;
    const signal = this.setup.closing;
    await guarded(() => this.setup.client(host, signal).chat({ model: name, messages: [], stream: false, keep_alive: 0 }), "request", host, signal);
  }

  /** The caller's signal joined with the engine's; throws when already aborted or unloaded. */
  private signalFor(signal: AbortSignal): AbortSignal {
    if (this.unloaded) throw new EngineError(`Model '${this.setup.spec.id}' was unloaded.`, "unavailable");
    const combined = AbortSignal.any([signal, this.setup.closing]);
    combined.throwIfAborted();
    return combined;
  }

  private async *stream(params: ChatParams): AsyncGenerator<ChatEvent> {
    const { host, name, keepAlive, requestOptions } = this.setup;
    const signal = this.signalFor(params.signal);
    const request: ChatRequest & { stream: true } = {
      model: name,
      messages: params.messages.map((m) => ({ role: m.role, content: m.content })),
      stream: true,
      keep_alive: keepAlive,
      logprobs: true,
      ...(params.topLogprobs > 0 && { top_logprobs: Math.min(params.topLogprobs, OLLAMA_MAX_TOP_LOGPROBS) }),
      options: {
        ...requestOptions,
        temperature: params.temperature,
        num_predict: params.maxTokens,
        ...(params.topP !== undefined && { top_p: params.topP }),
        ...(params.stop !== undefined && params.stop.length > 0 && { stop: params.stop }),
        ...(params.seed !== undefined && { seed: params.seed }),
      },
    };
    const iterator: AbortableAsyncIterator<ChatResponse> = await guarded(() => this.setup.client(host, signal).chat(request), "request", host, signal);
    const stop = () => iterator.abort();
    signal.addEventListener("abort", stop, { once: true });
    const mapper = new OllamaStreamMapper(params.maxTokens);
    try {
      for await (const chunk of iterator) {
        for (const event of mapper.map(chunk)) yield event;
      }
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      throw toEngineError(err, "stream", host);
    } finally {
      signal.removeEventListener("abort", stop);
      if (!mapper.done) iterator.abort();
    }
    if (!mapper.done) throw new EngineError(`Ollama at ${host}: the stream ended without its final object.`, "engine_crashed");
  }
}

function isNumberArray(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((x) => typeof x === "number");
}
