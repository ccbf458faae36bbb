/**
 * The edge agent's engine interface. An engine (llama.cpp in-process, an Ollama server, ONNX
 * Runtime) loads models; a loaded model streams chat tokens with their log-probabilities and
 * embeds text. The HTTP layer, capacity limits and confidence scoring sit above this interface
 * and never see engine types.
 */

export type EngineKind = "llamacpp" | "ollama" | "onnx";

/** What to load: `source` is a GGUF path or `hf:` URI (llamacpp), a model name (ollama), an ONNX file (onnx). */
export interface ModelSpec {
  /** The id clients use in `model`. */
  id: string;
  engine: EngineKind;
  source: string;
  /** Context window to allocate (tokens); engine default when absent. */
  contextLength?: number;
  /** CPU threads for in-process engines; default: from the cores available. */
  threads?: number;
  /** ONNX: the tokenizer file that goes with the model. */
  tokenizer?: string;
  /** Ollama: the server's base URL. */
  host?: string;
}

export interface ModelInfo {
  id: string;
  engine: EngineKind;
  source: string;
  contextLength: number;
  capabilities: { chat: boolean; embeddings: boolean };
  /** Embedding vector size, when the model embeds. */
  embeddingLength?: number;
  /** Resident memory attributed to the model, when the engine can tell. */
  memoryBytes?: number;
}

export interface ChatTurn {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
}

export interface ChatParams {
  messages: ChatTurn[];
  maxTokens: number;
  /** 0 = greedy (deterministic). */
  temperature: number;
  topP?: number;
  stop?: string[];
  seed?: number;
  /** How many alternatives to report per token (0 = none). */
  topLogprobs: number;
  /** Aborted when the client goes away: the engine stops generating at once. */
  signal: AbortSignal;
}

export interface TokenAlternative {
  token: string;
  logprob: number;
}

export type ChatEvent =
  | {
      type: "token";
      /** The text this token adds (may be empty for a partial UTF-8 sequence). */
      text: string;
      /** Natural log of the probability the model gave the chosen token. */
      logprob: number;
      /** Raw bytes of the token, for OpenAI's `logprobs.content[].bytes`. */
      bytes: number[];
      topLogprobs: TokenAlternative[];
    }
  | { type: "done"; finishReason: "stop" | "length"; promptTokens: number; completionTokens: number };

export interface LoadedModel {
  info(): ModelInfo;
  /** Tokens a prompt takes, for the context-overflow check before generating. */
  countTokens(messages: ChatTurn[]): Promise<number>;
  /** Each text's tokens with the model's own tokenizer, no chat template (`POST /v1/tokenize`); absent → the engine has none. */
  countTexts?(texts: readonly string[]): Promise<number[]>;
  /** Streams the answer; the last event is `done`. Throws `EngineError` on engine failure. */
  chat(params: ChatParams): AsyncIterable<ChatEvent>;
  embed(texts: string[], signal: AbortSignal): Promise<{ vectors: number[][]; promptTokens: number }>;
  unload(): Promise<void>;
}

export interface Engine {
  readonly kind: EngineKind;
  load(spec: ModelSpec): Promise<LoadedModel>;
  /** Releases everything the engine holds (native backends, connections). */
  close(): Promise<void>;
}

/** A failure inside an engine (crash, bad model file, server gone). */
export class EngineError extends Error {
  constructor(
    message: string,
    readonly code: "load_failed" | "engine_crashed" | "unsupported" | "unavailable",
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "EngineError";
  }
}
