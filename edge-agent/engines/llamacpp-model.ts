/**
 * A GGUF model loaded in-process: one llama.cpp context with `sequences` sequences for chat
 * (each `contextLength` tokens), and an embedding context created on the first `embed`.
 *
 * Concurrency: each chat borrows a sequence from a pool for its whole generation, so at most
 * `sequences` chats run at once and the rest wait, first come first served; node-llama-cpp
 * batches the running ones into shared llama.cpp decodes. Embedding calls run one at a time on
 * their own context. The capacity layer above decides how many requests to admit; nothing here
 * corrupts state if it admits more.
 *
 * Embeddings are mean-pooled over the input's tokens unless the GGUF declares its own pooling
 * (`<arch>.pooling_type`, as embedding models do: CLS, last token…); the engine sets the pooling
 * when loading (see `llamacpp.ts`). Vectors are L2-normalised, as OpenAI, llama-server and Ollama
 * return them. The embedding context holds `min(contextLength, 2048)` tokens, all in one batch:
 * llama.cpp pools per batch, so a longer input is refused rather than split.
 *
 * Errors: node-llama-cpp failures become `EngineError("engine_crashed")`; use after `unload`,
 * `EngineError("unavailable")`; a prompt or input that cannot fit, an empty embedding input or a
 * model without that capability, `EngineError("unsupported")`. An aborted chat throws the
 * signal's reason.
 */
import { DisposedError, type LlamaContext, type LlamaContextSequence, type LlamaEmbeddingContext, type LlamaModel } from "node-llama-cpp";
import { EngineError, type ChatEvent, type ChatParams, type ChatTurn, type LoadedModel, type ModelInfo, type ModelSpec } from "./engine.ts";
import { generate } from "./llamacpp-generate.ts";
import { Pool, type Lease } from "./llamacpp-pool.ts";
import { createPromptFormat, type PromptFormat } from "./llamacpp-prompt.ts";
import { createTokenRenderer, type TokenRenderer } from "./llamacpp-vocab.ts";

/** The largest embedding context the engine allocates (tokens). */
export const MAX_EMBEDDING_CONTEXT = 2048;

/** What `LlamaCppModel` is built from; `llamacpp.ts` creates these. */
export interface LlamaCppModelParts {
  spec: ModelSpec;
  model: LlamaModel;
  /** Absent when the model cannot generate (an encoder-only embedding model). */
  context?: LlamaContext;
  /** Tokens per sequence asked for (the spec's, or the engine default). */
  contextLength: number;
  threads: number;
  reusePrefix: boolean;
  /** Called once the model is unloaded, so the engine forgets it. */
  onUnload?: () => void;
}

/** Wraps anything node-llama-cpp throws; keeps `EngineError`s and abort reasons as they are. */
export function toEngineError(err: unknown, doing: string): Error {
  if (err instanceof EngineError) return err;
  if (err instanceof DisposedError) return new EngineError(`llama.cpp: ${doing}: the model was unloaded`, "unavailable", { cause: err });
  if (err instanceof Error && err.name === "AbortError") return err;
  const detail = err instanceof Error ? err.message : String(err);
  return new EngineError(`llama.cpp: ${doing} failed: ${detail}`, "engine_crashed", { cause: err });
}

/** A loaded GGUF model: the `LoadedModel` the llama.cpp engine hands out. */
export class LlamaCppModel implements LoadedModel {
  private readonly spec: ModelSpec;
  private readonly model: LlamaModel;
  private readonly context: LlamaContext | undefined;
  private readonly sequences: Pool<LlamaContextSequence> | undefined;
  private readonly prompt: PromptFormat | undefined;
  private readonly renderer: TokenRenderer;
  private readonly embeddingContextLength: number;
  private readonly threads: number;
  private readonly reusePrefix: boolean;
  private readonly onUnload: (() => void) | undefined;
  /** Aborted by `unload`: running chats stop within one token. */
  private readonly unloading = new AbortController();
  private embedding: Promise<LlamaEmbeddingContext> | undefined;
  /** llama.cpp's estimate for the embedding context once created (bytes), else 0. */
  private embeddingMemory = 0;
  private embeddingQueue: Promise<unknown> = Promise.resolve();
  private unloaded: Promise<void> | undefined;

  constructor(parts: LlamaCppModelParts) {
    this.spec = parts.spec;
    this.model = parts.model;
    this.context = parts.context;
    this.threads = parts.threads;
    this.embeddingContextLength = Math.min(parts.contextLength, MAX_EMBEDDING_CONTEXT);
    this.reusePrefix = parts.reusePrefix;
    this.onUnload = parts.onUnload;
    this.renderer = createTokenRenderer(parts.model);
    if (parts.context) {
      const sequences: LlamaContextSequence[] = [];
      for (let i = 0; i < parts.context.totalSequences; i++) sequences.push(parts.context.getSequence());
      this.sequences = new Pool(sequences);
      this.prompt = createPromptFormat(parts.model);
    }
  }

  info(): ModelInfo {
    const { spec, model, context } = this;
    const usage = (m: { ram: number; vram: number }): number => m.ram + m.vram;
    const memory = usage(model.memoryUsage) + (context && !context.disposed ? usage(context.memoryUsage) : 0) + this.embeddingMemory;
    return {
      id: spec.id,
      engine: "llamacpp",
      source: spec.source,
      contextLength: context?.contextSize ?? this.embeddingContextLength,
      capabilities: { chat: context !== undefined, embeddings: canEmbed(model) },
      embeddingLength: model.embeddingVectorSize,
      memoryBytes: memory,
    };
  }

  countTokens(messages: ChatTurn[]): Promise<number> {
    try {
      this.ensureOpen();
      return Promise.resolve(this.chatFormat().tokens(messages).length);
    } catch (err) {
      return Promise.reject(toEngineError(err, "applying the chat template"));
    }
  }

  countTexts(texts: readonly string[]): Promise<number[]> {
    try {
      this.ensureOpen();
      return Promise.resolve(texts.map((t) => (t === "" ? 0 : this.model.tokenize(t).length)));
    } catch (err) {
      return Promise.reject(toEngineError(err, "tokenizing"));
    }
  }

  async *chat(params: ChatParams): AsyncIterable<ChatEvent> {
    this.ensureOpen();
    const format = this.chatFormat();
    const pool = this.sequences;
    if (pool === undefined) throw new EngineError(`${this.spec.id}: this model cannot generate text`, "unsupported");
    let prompt;
    try {
      prompt = format.tokens(params.messages);
    } catch (err) {
      throw toEngineError(err, "applying the chat template");
    }
    const contextSize = this.context?.contextSize ?? 0;
    if (prompt.length >= contextSize) {
      throw new EngineError(`${this.spec.id}: the prompt takes ${prompt.length} tokens; the context holds ${contextSize}`, "unsupported");
    }
    const { signal, dispose } = linkedSignal(params.signal, this.unloading.signal);
    let lease: Lease<LlamaContextSequence> | undefined;
    try {
      lease = await pool.acquire(signal);
      const stop = format.stopStrings.length === 0 ? params.stop : [...(params.stop ?? []), ...format.stopStrings];
      yield* generate({
        model: this.model,
        sequence: lease.value,
        prompt,
        params: { ...params, stop },
        renderer: this.renderer,
        stopTokens: format.stopTokens,
        reusePrefix: this.reusePrefix,
        signal,
      });
    } catch (err) {
      if (signal.aborted) throw signal.reason; // the client's own reason, or unavailable on unload
      throw toEngineError(err, "generating");
    } finally {
      lease?.release();
      dispose();
    }
  }

  async embed(texts: string[], signal: AbortSignal): Promise<{ vectors: number[][]; promptTokens: number }> {
    this.ensureOpen();
    if (!canEmbed(this.model)) throw new EngineError(`${this.spec.id}: this model cannot embed`, "unsupported");
    const linked = linkedSignal(signal, this.unloading.signal);
    // One embedding batch at a time: the context has a single sequence.
    const run = this.embeddingQueue.then(() => this.embedNow(texts, linked.signal)).finally(linked.dispose);
    this.embeddingQueue = run.catch(() => undefined);
    return run;
  }

  private async embedNow(texts: readonly string[], signal: AbortSignal): Promise<{ vectors: number[][]; promptTokens: number }> {
    signal.throwIfAborted();
    try {
      const context = await this.embeddingContext();
      const limit = this.embeddingContextLength;
      const vectors: number[][] = [];
      let promptTokens = 0;
      for (const [i, text] of texts.entries()) {
        signal.throwIfAborted();
        if (text.length === 0) throw new EngineError(`${this.spec.id}: input ${i} is empty`, "unsupported");
        const length = context.calculateInputLength(text);
        if (length >= limit) {
          throw new EngineError(`${this.spec.id}: input ${i} takes ${length} tokens; the embedding context holds ${limit - 1}`, "unsupported");
        }
        const { vector } = await context.getEmbeddingFor(text);
        vectors.push(normalize(vector));
        promptTokens += length;
      }
      return { vectors, promptTokens };
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      throw toEngineError(err, "embedding");
    }
  }

  private embeddingContext(): Promise<LlamaEmbeddingContext> {
    this.embedding ??= (async () => {
      const contextSize = this.embeddingContextLength;
      const context = await this.model.createEmbeddingContext({ contextSize, batchSize: contextSize, threads: this.threads });
      const estimate = await this.model.fileInsights
        .estimateContextResourceRequirementsV2({ contextSize, batchSize: contextSize, modelGpuLayers: this.model.gpuLayers, isEmbeddingContext: true })
        .catch(() => ({ cpuRam: 0, gpuVram: 0 }));
      this.embeddingMemory = estimate.cpuRam + estimate.gpuVram;
      return context;
    })().catch((err: unknown) => {
      this.embedding = undefined; // the next call tries again
      throw err;
    });
    return this.embedding;
  }

  unload(): Promise<void> {
    this.unloaded ??= this.release();
    return this.unloaded;
  }

  private async release(): Promise<void> {
    this.unloading.abort(new EngineError(`${this.spec.id}: the model was unloaded`, "unavailable"));
    try {
      await this.sequences?.whenIdle();
      await this.embeddingQueue;
      const embedding = await this.embedding?.catch(() => undefined);
      await embedding?.dispose();
      await this.context?.dispose();
      await this.model.dispose();
    } catch (err) {
      throw toEngineError(err, "unloading");
    } finally {
      this.onUnload?.();
    }
  }

  private ensureOpen(): void {
    if (this.unloaded !== undefined) throw new EngineError(`${this.spec.id}: the model was unloaded`, "unavailable");
  }

  private chatFormat(): PromptFormat {
    if (this.prompt === undefined) throw new EngineError(`${this.spec.id}: this model cannot generate text`, "unsupported");
    return this.prompt;
  }
}

/**
 * A signal that aborts (with the same reason) when either input does; `dispose` detaches it.
 * Not `AbortSignal.any`: combined with the model's long-lived unload signal on every request, it
 * leaks in Node 20–22 (nodejs/node#55351).
 */
function linkedSignal(a: AbortSignal, b: AbortSignal): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onA = (): void => controller.abort(a.reason);
  const onB = (): void => controller.abort(b.reason);
  const dispose = (): void => {
    a.removeEventListener("abort", onA);
    b.removeEventListener("abort", onB);
  };
  if (a.aborted) onA();
  else if (b.aborted) onB();
  else {
    a.addEventListener("abort", onA, { once: true });
    b.addEventListener("abort", onB, { once: true });
  }
  return { signal: controller.signal, dispose };
}

function canEmbed(model: LlamaModel): boolean {
  return !(model.fileInsights.hasEncoder && model.fileInsights.hasDecoder);
}

/** L2-normalises `vector` (a zero vector is returned as is). */
export function normalize(vector: readonly number[]): number[] {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  return norm > 0 ? vector.map((x) => x / norm) : [...vector];
}
