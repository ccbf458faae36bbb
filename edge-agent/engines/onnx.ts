/**
 * The ONNX Runtime engine, for embedding (and embedding-style classifier) models exported to
 * ONNX, run in-process on the CPU with `onnxruntime-node`. It does not chat.
 *
 * - `load(spec)`: `spec.source` is the `.onnx` file, `spec.tokenizer` the tokenizer JSON that
 *   goes with it (format in `tokenizer.ts`; required), `spec.threads` the intra-op threads
 *   (default 1: the agent runs several models and requests side by side), `spec.contextLength`
 *   an optional cap on the tokenizer's `max_length`.
 * - Inputs the engine feeds, by name: `input_ids` (required), `attention_mask` (1 for tokens, 0
 *   for padding) and `token_type_ids` (zeros), each int64 or int32 `[batch, seq]`. A model with
 *   any other input is refused at load.
 * - Output used, first present: `sentence_embedding` or `embeddings` (`[batch, hidden]`, pooled
 *   by the model), else `last_hidden_state` (`[batch, seq, hidden]`, mean-pooled over the mask
 *   here); all are float32 and L2-normalized (`onnx-pooling.ts`). `embeddingLength` comes from
 *   the output's declared shape, or from the first answer when that dimension is symbolic.
 * - `embed(texts)` runs batches of up to `batchSize` texts (default 16), each padded to its own
 *   longest text; `signal` is checked between batches (a run in progress is not interruptible).
 *   `promptTokens` counts the real tokens, special ones included, padding excluded.
 * - `countTokens` uses the tokenizer; `chat()` fails with `unsupported`.
 * - Errors: `load_failed` for a missing or bad tokenizer or model file, or unusable inputs or
 *   outputs; `engine_crashed` when a run fails; `unavailable` after `unload()`.
 */
import { readFile } from "node:fs/promises";
import { InferenceSession, Tensor } from "onnxruntime-node";
import { EngineError, type ChatEvent, type ChatTurn, type Engine, type LoadedModel, type ModelInfo, type ModelSpec } from "./engine.ts";
import { meanPool, pooledRows } from "./onnx-pooling.ts";
import { createTokenizer, parseTokenizerConfig, type Tokenizer } from "./tokenizer.ts";

/** Options of `createOnnxEngine`; all optional. */
export interface OnnxEngineOptions {
  /** Most texts per `run`. Default 16. */
  batchSize?: number;
}

type IdType = "int64" | "int32";
type InputName = "input_ids" | "attention_mask" | "token_type_ids";

/** How the engine talks to one model: what it feeds and which output it reads. */
export interface OnnxIoPlan {
  inputs: { name: InputName; type: IdType }[];
  output: { name: string; kind: "pooled" | "tokens" };
  embeddingLength: number | undefined;
}

const INPUT_NAMES: readonly InputName[] = ["input_ids", "attention_mask", "token_type_ids"];
const OUTPUTS: readonly { name: string; kind: "pooled" | "tokens" }[] = [
  { name: "sentence_embedding", kind: "pooled" },
  { name: "embeddings", kind: "pooled" },
  { name: "last_hidden_state", kind: "tokens" },
];

const isInputName = (name: string): name is InputName => (INPUT_NAMES as readonly string[]).includes(name);

/** Checks a session's inputs and outputs against what the engine can drive; errors name each one. */
export function planIo(
  inputs: readonly InferenceSession.ValueMetadata[],
  outputs: readonly InferenceSession.ValueMetadata[],
): { ok: true; value: OnnxIoPlan } | { ok: false; errors: string[] } {
  const errors: string[] = [];
  const plannedInputs: OnnxIoPlan["inputs"] = [];
  for (const input of inputs) {
    if (!isInputName(input.name)) errors.push(`input '${input.name}': not one the engine feeds (${INPUT_NAMES.join(", ")})`);
    else if (!input.isTensor || (input.type !== "int64" && input.type !== "int32")) errors.push(`input '${input.name}': expected an int64 or int32 tensor`);
    else plannedInputs.push({ name: input.name, type: input.type });
  }
  if (!inputs.some((i) => i.name === "input_ids")) errors.push("input 'input_ids': missing");
  const choice = OUTPUTS.find((o) => outputs.some((m) => m.name === o.name));
  const meta = outputs.find((m) => m.name === choice?.name);
  if (choice === undefined || meta === undefined) {
    errors.push(`outputs: none of ${OUTPUTS.map((o) => o.name).join(", ")} (the model has ${outputs.map((o) => o.name).join(", ") || "none"})`);
    return { ok: false, errors };
  }
  const rank = choice.kind === "pooled" ? 2 : 3;
  if (!meta.isTensor || meta.type !== "float32") errors.push(`output '${meta.name}': expected a float32 tensor`);
  else if (meta.shape.length !== 0 && meta.shape.length !== rank) errors.push(`output '${meta.name}': expected rank ${rank}, got [${meta.shape.join(", ")}]`);
  if (errors.length > 0) return { ok: false, errors };
  const last = meta.isTensor ? meta.shape.at(-1) : undefined;
  return { ok: true, value: { inputs: plannedInputs, output: choice, embeddingLength: typeof last === "number" && last > 0 ? last : undefined } };
}

/** Reads and checks a tokenizer file; `maxLength` caps its `max_length`. */
export async function loadTokenizer(path: string, maxLength?: number): Promise<Tokenizer> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, "utf8"));
  } catch (err) {
    throw new EngineError(`Tokenizer ${path}: ${err instanceof Error ? err.message : String(err)}`, "load_failed", { cause: err });
  }
  const parsed = parseTokenizerConfig(json);
  if (!parsed.ok) throw new EngineError(`Tokenizer ${path}: ${parsed.errors.join("; ")}`, "load_failed");
  const config = parsed.value;
  return createTokenizer(maxLength === undefined ? config : { ...config, maxLength: Math.max(Math.min(config.maxLength, maxLength), 3) });
}

function idTensor(type: IdType, values: number[], dims: readonly [number, number]): Tensor {
  switch (type) {
    case "int64":
      return new Tensor(
        "int64",
        BigInt64Array.from(values, (v) => BigInt(v)),
        dims,
      );
    case "int32":
      return new Tensor("int32", Int32Array.from(values), dims);
    default: {
      const never: never = type;
      throw new Error(`Unknown id type ${String(never)}`);
    }
  }
}

/** Creates the engine. */
export function createOnnxEngine(options: OnnxEngineOptions = {}): Engine {
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? 16));
  const models = new Set<OnnxModel>();

  async function load(spec: ModelSpec): Promise<LoadedModel> {
    if (spec.tokenizer === undefined) throw new EngineError(`Model '${spec.id}': an ONNX model needs 'tokenizer' (the tokenizer JSON file).`, "load_failed");
    const tokenizer = await loadTokenizer(spec.tokenizer, spec.contextLength);
    let session: InferenceSession;
    try {
      session = await InferenceSession.create(spec.source, {
        executionProviders: ["cpu"],
        intraOpNumThreads: spec.threads ?? 1,
        interOpNumThreads: 1,
        graphOptimizationLevel: "all",
        logSeverityLevel: 3,
      });
    } catch (err) {
      throw new EngineError(`ONNX model ${spec.source}: ${err instanceof Error ? err.message : String(err)}`, "load_failed", { cause: err });
    }
    const plan = planIo(session.inputMetadata, session.outputMetadata);
    if (!plan.ok) {
      await session.release();
      throw new EngineError(`ONNX model ${spec.source}: ${plan.errors.join("; ")}`, "load_failed");
    }
    const model = new OnnxModel(spec, session, tokenizer, plan.value, batchSize, () => models.delete(model));
    models.add(model);
    return model;
  }

  return {
    kind: "onnx",
    load,
    async close() {
      await Promise.all([...models].map((m) => m.unload()));
    },
  };
}

/** A model in an ONNX Runtime session. */
class OnnxModel implements LoadedModel {
  private embeddingLength: number | undefined;
  private released = false;
  private readonly running = new Set<Promise<unknown>>();

  constructor(
    private readonly spec: ModelSpec,
    private readonly session: InferenceSession,
    private readonly tokenizer: Tokenizer,
    private readonly plan: OnnxIoPlan,
    private readonly batchSize: number,
    private readonly forget: () => void,
  ) {
    this.embeddingLength = plan.embeddingLength;
  }

  info(): ModelInfo {
    return {
      id: this.spec.id,
      engine: "onnx",
      source: this.spec.source,
      contextLength: this.tokenizer.maxLength,
      capabilities: { chat: false, embeddings: true },
      ...(this.embeddingLength !== undefined && { embeddingLength: this.embeddingLength }),
    };
  }

  countTokens(messages: ChatTurn[]): Promise<number> {
    return Promise.resolve(messages.reduce((sum, m) => sum + this.tokenizer.encode(m.content).length, 0));
  }

  chat(): AsyncIterable<ChatEvent> {
    const error = new EngineError(`Model '${this.spec.id}' is an ONNX embedding model; it does not chat.`, "unsupported");
    return { [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(error) }) };
  }

  async embed(texts: string[], signal: AbortSignal): Promise<{ vectors: number[][]; promptTokens: number }> {
    const vectors: number[][] = [];
    let promptTokens = 0;
    for (let start = 0; start < texts.length; start += this.batchSize) {
      signal.throwIfAborted();
      if (this.released) throw new EngineError(`Model '${this.spec.id}' was unloaded.`, "unavailable");
      const encoded = texts.slice(start, start + this.batchSize).map((text) => this.tokenizer.encode(text));
      promptTokens += encoded.reduce((sum, ids) => sum + ids.length, 0);
      const run = this.runBatch(encoded);
      this.running.add(run);
      try {
        vectors.push(...(await run));
      } finally {
        this.running.delete(run);
      }
    }
    return { vectors, promptTokens };
  }

  /** Waits for runs in progress, then frees the session. */
  async unload(): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.forget();
    await Promise.allSettled([...this.running]);
    await this.session.release();
  }

  private async runBatch(encoded: number[][]): Promise<number[][]> {
    const batch = encoded.length;
    const seq = Math.max(1, ...encoded.map((ids) => ids.length));
    const ids: number[] = [];
    const mask: number[] = [];
    for (const row of encoded) {
      for (let s = 0; s < seq; s += 1) {
        const id = row[s];
        ids.push(id ?? this.tokenizer.padId);
        mask.push(id === undefined ? 0 : 1);
      }
    }
    const dims = [batch, seq] as const;
    const feeds: Record<string, Tensor> = {};
    for (const input of this.plan.inputs) {
      const values = input.name === "input_ids" ? ids : input.name === "attention_mask" ? mask : new Array<number>(ids.length).fill(0);
      feeds[input.name] = idTensor(input.type, values, dims);
    }
    const { name, kind } = this.plan.output;
    let output: unknown;
    try {
      output = (await this.session.run(feeds, [name]))[name];
    } catch (err) {
      throw new EngineError(`ONNX model ${this.spec.source}: run failed: ${err instanceof Error ? err.message : String(err)}`, "engine_crashed", {
        cause: err,
      });
    }
    if (!(output instanceof Tensor) || !(output.data instanceof Float32Array))
      throw new EngineError(`ONNX model ${this.spec.source}: output '${name}' is not float32.`, "engine_crashed");
    const hidden = output.dims.at(-1) ?? 0;
    const expected = kind === "pooled" ? [batch, hidden] : [batch, seq, hidden];
    if (hidden <= 0 || output.dims.length !== expected.length || output.dims.some((d, i) => d !== expected[i])) {
      throw new EngineError(
        `ONNX model ${this.spec.source}: output '${name}' has shape [${output.dims.join(", ")}], expected [${expected.join(", ")}].`,
        "engine_crashed",
      );
    }
    this.embeddingLength ??= hidden;
    return kind === "pooled" ? pooledRows(output.data, batch, hidden) : meanPool(output.data, mask, batch, seq, hidden);
  }
}
