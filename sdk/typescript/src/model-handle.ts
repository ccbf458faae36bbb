/**
 * A small model on the device behind one interface, whatever runs it: `ModelHandle`, with
 * `chat()` (messages) and `generate()` (one prompt, the model's template applied, as Ollama's
 * `/api/generate` does), each whole or streamed, each answer with its confidence — the geometric
 * mean of the generated tokens' probabilities, the score the gateway's cascade judges.
 *
 * Engines are the edge agent's (`@gearbox/edge-agent`): `llama.cpp` is node-llama-cpp in this
 * process on a GGUF file; `ollama` is an Ollama server through the `ollama` client (logprobs need
 * Ollama 0.12 or newer; without them an answer is unscored and the gateway upgrades it).
 */
import type { ChatTurn, Engine, LoadedModel } from "../../../edge-agent/engines/engine.ts";
import { ConfidenceMeter } from "../../../edge-agent/confidence.ts";

export type EngineName = "llama.cpp" | "ollama";

export interface ModelSpec {
  /** The model id the gateway and the app use (`qwen2.5-0.5b`). */
  id: string;
  engine: EngineName;
  /** GGUF path (llama.cpp) or Ollama model name (ollama). */
  source: string;
  /** Ollama's base URL (default http://127.0.0.1:11434). */
  host?: string;
  threads?: number;
  contextLength?: number;
}

export interface GenerateOptions {
  maxTokens?: number;
  /** 0 = greedy (the default: the same answer and confidence every time). */
  temperature?: number;
  topP?: number;
  stop?: string[];
  seed?: number;
  signal?: AbortSignal;
}

export interface LocalAnswer {
  text: string;
  /** null when no token was scored. */
  confidence: number | null;
  usage: { prompt_tokens: number; completion_tokens: number };
  finishReason: "stop" | "length";
}

/** A streamed local answer: text pieces, then the whole answer. */
export type LocalChunk = { type: "text"; text: string } | { type: "done"; answer: LocalAnswer };

export interface ModelHandle {
  readonly spec: ModelSpec;
  readonly engine: EngineName;
  readonly loaded: boolean;
  /** Times the model was loaded by this handle (a resume must not raise it). */
  readonly loads: number;
  load(): Promise<void>;
  unload(): Promise<void>;
  chat(messages: ChatTurn[], options?: GenerateOptions): Promise<LocalAnswer>;
  chatStream(messages: ChatTurn[], options?: GenerateOptions): AsyncIterable<LocalChunk>;
  generate(prompt: string, options?: GenerateOptions & { system?: string }): Promise<LocalAnswer>;
  generateStream(prompt: string, options?: GenerateOptions & { system?: string }): AsyncIterable<LocalChunk>;
  /** Unloads and releases the engine. */
  close(): Promise<void>;
}

export type { ChatTurn };

/** Engine factories, loaded lazily: an app that only uses Ollama never loads llama.cpp. */
async function engineFor(spec: ModelSpec): Promise<Engine> {
  switch (spec.engine) {
    case "llama.cpp": {
      const { createLlamaCppEngine } = await import("../../../edge-agent/engines/llamacpp.ts");
      return createLlamaCppEngine({ download: false });
    }
    case "ollama": {
      const { createOllamaEngine } = await import("../../../edge-agent/engines/ollama.ts");
      return createOllamaEngine(spec.host === undefined ? {} : { host: spec.host });
    }
    default: {
      const never: never = spec.engine;
      throw new Error(`unknown engine '${String(never)}' (llama.cpp or ollama)`);
    }
  }
}

class EngineHandle implements ModelHandle {
  private engine_: Engine | undefined;
  private model: LoadedModel | undefined;
  private loading: Promise<void> | undefined;
  loads = 0;

  constructor(
    readonly spec: ModelSpec,
    private readonly make: (spec: ModelSpec) => Promise<Engine>,
  ) {}

  get engine(): EngineName {
    return this.spec.engine;
  }

  get loaded(): boolean {
    return this.model !== undefined;
  }

  load(): Promise<void> {
    if (this.model) return Promise.resolve();
    this.loading ??= (async () => {
      try {
        this.engine_ ??= await this.make(this.spec);
        this.model = await this.engine_.load({
          id: this.spec.id,
          engine: this.spec.engine === "llama.cpp" ? "llamacpp" : "ollama",
          source: this.spec.source,
          ...(this.spec.host !== undefined && { host: this.spec.host }),
          ...(this.spec.threads !== undefined && { threads: this.spec.threads }),
          ...(this.spec.contextLength !== undefined && { contextLength: this.spec.contextLength }),
        });
        this.loads++;
      } finally {
        this.loading = undefined;
      }
    })();
    return this.loading;
  }

  async unload(): Promise<void> {
    const model = this.model;
    this.model = undefined;
    await model?.unload();
  }

  async close(): Promise<void> {
    await this.unload();
    await this.engine_?.close();
    this.engine_ = undefined;
  }

  async chat(messages: ChatTurn[], options: GenerateOptions = {}): Promise<LocalAnswer> {
    let answer: LocalAnswer | undefined;
    for await (const chunk of this.chatStream(messages, options)) if (chunk.type === "done") answer = chunk.answer;
    if (!answer) throw new Error(`${this.spec.id}: the engine ended without an answer`);
    return answer;
  }

  async *chatStream(messages: ChatTurn[], options: GenerateOptions = {}): AsyncIterable<LocalChunk> {
    await this.load();
    const model = this.model;
    if (!model) throw new Error(`${this.spec.id} is not loaded`);
    const meter = new ConfidenceMeter();
    let text = "";
    const events = model.chat({
      messages,
      maxTokens: options.maxTokens ?? 256,
      temperature: options.temperature ?? 0,
      topLogprobs: 0,
      signal: options.signal ?? new AbortController().signal,
      ...(options.topP !== undefined && { topP: options.topP }),
      ...(options.stop !== undefined && { stop: options.stop }),
      ...(options.seed !== undefined && { seed: options.seed }),
    });
    for await (const e of events) {
      if (e.type === "token") {
        meter.add(e.logprob);
        text += e.text;
        if (e.text) yield { type: "text", text: e.text };
        continue;
      }
      const c = meter.result();
      yield {
        type: "done",
        answer: {
          text,
          confidence: c ? Math.round(c.score * 1e6) / 1e6 : null,
          usage: { prompt_tokens: e.promptTokens, completion_tokens: e.completionTokens },
          finishReason: e.finishReason,
        },
      };
    }
  }

  generate(prompt: string, options: GenerateOptions & { system?: string } = {}): Promise<LocalAnswer> {
    return this.chat(promptTurns(prompt, options.system), options);
  }

  generateStream(prompt: string, options: GenerateOptions & { system?: string } = {}): AsyncIterable<LocalChunk> {
    return this.chatStream(promptTurns(prompt, options.system), options);
  }
}

function promptTurns(prompt: string, system: string | undefined): ChatTurn[] {
  return [...(system === undefined ? [] : [{ role: "system" as const, content: system }]), { role: "user", content: prompt }];
}

/** A handle on `spec` (not loaded yet: `load()`, or the first answer, loads it). `engine`: tests may share one. */
export function createModelHandle(spec: ModelSpec, engine?: Engine): ModelHandle {
  return new EngineHandle(spec, engine ? () => Promise.resolve(engine) : engineFor);
}
