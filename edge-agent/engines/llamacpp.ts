/**
 * The in-process llama.cpp engine, on node-llama-cpp 3.21.1.
 *
 * Backend: one `Llama` per engine, made on the first `load` with `getLlama({ gpu, build: "never" })`.
 * `gpu` defaults to `"auto"` (CUDA or Vulkan on Linux, Metal on macOS, else CPU); pass `false` for
 * CPU only, or a `Llama` of your own (the engine then never disposes it). `build: "never"` means
 * only the prebuilt binaries shipped as `@node-llama-cpp/*` packages are used: nothing is compiled
 * or downloaded at run time, and a platform without a prebuilt binary fails to load with
 * `EngineError("load_failed")`.
 *
 * Loading: `spec.source` is a GGUF path, or an `hf:` URI / `https:` URL resolved by
 * `resolveModelFile` into `modelsDirectory` (default `~/.node-llama-cpp/models`; downloaded when
 * absent unless `download: false`). Any failure there (no network, bad file, not GGUF) is
 * `EngineError("load_failed")` with the cause. Each model gets one context of `sequences`
 * sequences (default 1), each `spec.contextLength` tokens (default `min(trained context, 4096)`),
 * evaluated on `spec.threads` threads (default `max(1, min(cores − 1, 8))` from
 * `os.availableParallelism()`). Keep threads at or below the physical cores: llama.cpp spins its
 * threads, and on a 2-core host 4 threads were measured ~700× slower per token than 1.
 */
import { availableParallelism } from "node:os";
import path from "node:path";
import { stat } from "node:fs/promises";
import { getLlama, readGgufFileInfo, resolveModelFile, type Llama, type LlamaGpuType, type LlamaModel, type LlamaModelOptions } from "node-llama-cpp";
import { EngineError, type Engine, type LoadedModel, type ModelSpec } from "./engine.ts";
import { LlamaCppModel } from "./llamacpp-model.ts";

/** Options of `createLlamaCppEngine`; all optional. */
export interface LlamaCppEngineOptions {
  /** GPU backend: `"auto"` (default) picks the best available; `false` is CPU only. */
  gpu?: "auto" | LlamaGpuType;
  /** Use this backend instead of creating one (tests share one; the engine never disposes it). */
  llama?: Llama;
  /** Where `hf:` URIs and URLs are downloaded to and looked up. Default `~/.node-llama-cpp/models`. */
  modelsDirectory?: string;
  /** `false`: only use model files already in `modelsDirectory`. Default `"auto"` (download when absent). */
  download?: "auto" | false;
  /** Sequences (parallel chats) per model, when the spec does not say. Default 1. */
  sequences?: number;
  /** Reuse the KV cache of a prompt's prefix from the sequence's previous chat. Default true. */
  reusePrefix?: boolean;
}

/** A `ModelSpec` with the llama.cpp-only knob: parallel sequences for this model. */
export interface LlamaCppModelSpec extends ModelSpec {
  sequences?: number;
}

/** Default context when the spec gives none: the trained context, capped (KV memory grows with it). */
export const DEFAULT_CONTEXT_CAP = 4096;

/** Default CPU threads: one core left for the event loop and the rest of the process, at most 8. */
export function defaultThreads(cores = availableParallelism()): number {
  return Math.max(1, Math.min(cores - 1, 8));
}

const isRemote = (source: string): boolean => /^(hf:|huggingface:|https?:)/i.test(source);

function positiveInt(value: number | undefined, field: string, id: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < 1) throw new EngineError(`${id}: ${field} must be a positive integer, got ${value}`, "load_failed");
  return value;
}

/** Creates the llama.cpp engine. Nothing native is touched until the first `load`. */
export function createLlamaCppEngine(options: LlamaCppEngineOptions = {}): Engine {
  const ownsLlama = options.llama === undefined;
  let llama: Promise<Llama> | undefined = options.llama ? Promise.resolve(options.llama) : undefined;
  const loaded = new Set<LlamaCppModel>();
  let closed = false;

  const backend = (): Promise<Llama> => {
    llama ??= getLlama({ gpu: options.gpu ?? "auto", build: "never", progressLogs: false }).catch((err: unknown) => {
      llama = undefined; // the next load tries again
      throw err;
    });
    return llama;
  };

  async function resolveSource(spec: ModelSpec): Promise<string> {
    if (isRemote(spec.source)) {
      return resolveModelFile(spec.source, { directory: options.modelsDirectory, download: options.download ?? "auto", cli: false });
    }
    const file = path.resolve(spec.source);
    const info = await stat(file);
    if (!info.isFile()) throw new Error(`${file} is not a file`);
    return file;
  }

  async function load(spec: LlamaCppModelSpec): Promise<LoadedModel> {
    if (closed) throw new EngineError("llama.cpp engine is closed", "unavailable");
    if (spec.engine !== "llamacpp") throw new EngineError(`${spec.id}: engine ${spec.engine} is not llamacpp`, "unsupported");
    const threads = positiveInt(spec.threads, "threads", spec.id) ?? defaultThreads();
    const contextLength = positiveInt(spec.contextLength, "contextLength", spec.id);
    const sequences = positiveInt(spec.sequences ?? options.sequences, "sequences", spec.id) ?? 1;

    let model: LlamaModel | undefined;
    try {
      const modelPath = await resolveSource(spec);
      const file = await readGgufFileInfo(modelPath, { sourceType: "filesystem", readTensorInfo: false, logWarnings: false });
      const arch = file.metadata.general.architecture;
      const declared = (file.metadata as unknown as Record<string, { pooling_type?: number } | undefined>)[arch]?.pooling_type;
      // Mean pooling (1) for embeddings unless the model declares its own (see llamacpp-model.ts).
      const metadataOverrides = declared === undefined ? ({ [arch]: { pooling_type: 1 } } as LlamaModelOptions["metadataOverrides"]) : undefined;
      const llamaInstance = await backend();
      model = await llamaInstance.loadModel({ modelPath, metadataOverrides });
      const contextSize = contextLength ?? Math.min(model.trainContextSize, DEFAULT_CONTEXT_CAP);
      const context = model.fileInsights.hasDecoder ? await model.createContext({ contextSize, sequences, threads }) : undefined;
      const handle: LlamaCppModel = new LlamaCppModel({
        spec,
        model,
        context,
        contextLength: contextSize,
        threads,
        reusePrefix: options.reusePrefix ?? true,
        onUnload: () => loaded.delete(handle),
      });
      if (closed) {
        // `close` ran while this model was loading: it must not outlive the engine.
        await handle.unload();
        throw new EngineError("llama.cpp engine is closed", "unavailable");
      }
      loaded.add(handle);
      return handle;
    } catch (err) {
      await model?.dispose().catch(() => undefined);
      if (err instanceof EngineError) throw err;
      const detail = err instanceof Error ? err.message : String(err);
      throw new EngineError(`${spec.id}: cannot load ${spec.source}: ${detail}`, "load_failed", { cause: err });
    }
  }

  return {
    kind: "llamacpp",
    load,
    async close() {
      closed = true;
      await Promise.allSettled([...loaded].map((m) => m.unload()));
      if (ownsLlama && llama) {
        const instance = await llama.catch(() => undefined);
        await instance?.dispose();
      }
    },
  };
}
