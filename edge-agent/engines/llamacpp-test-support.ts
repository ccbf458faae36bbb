/**
 * Test support for the llama.cpp engine: the tiny GGUF in a temp dir, a CPU-only backend (no
 * build, no download), one thread, and helpers to run a chat to the end.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { getLlama, LlamaLogLevel, type Llama } from "node-llama-cpp";
import { writeTinyGguf, type TinyGgufOptions } from "../model/tiny-gguf.ts";
import type { ChatEvent, ChatParams, ChatTurn, Engine, LoadedModel } from "./engine.ts";
import { createLlamaCppEngine, type LlamaCppEngineOptions, type LlamaCppModelSpec } from "./llamacpp.ts";

/** A chat's `token` event. */
export type TokenEvent = Extract<ChatEvent, { type: "token" }>;
/** A chat's final `done` event. */
export type DoneEvent = Extract<ChatEvent, { type: "done" }>;

/** A temp dir with tiny GGUFs, a CPU backend and an engine over it. */
export interface TinyFixture {
  dir: string;
  /** The default tiny model (seed 1). */
  file: string;
  llama: Llama;
  engine: Engine;
  /** Writes another tiny model into the temp dir. */
  write(name: string, options?: TinyGgufOptions): Promise<string>;
  /** Loads `source` (default: the tiny model) with one thread. */
  load(spec?: Partial<LlamaCppModelSpec>): Promise<LoadedModel>;
  close(): Promise<void>;
}

/** Writes the tiny model, makes a CPU backend and an engine over it (the engine never owns it). */
export async function tinyFixture(engineOptions: Omit<LlamaCppEngineOptions, "llama"> = {}): Promise<TinyFixture> {
  const dir = await mkdtemp(path.join(tmpdir(), "llamacpp-engine-"));
  const write = async (name: string, options?: TinyGgufOptions): Promise<string> => {
    const file = path.join(dir, name);
    await writeTinyGguf(file, options);
    return file;
  };
  const file = await write("tiny.gguf");
  // Error level: the EOS-override model makes llama.cpp warn about its tokenizer config.
  const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
  const engine = createLlamaCppEngine({ ...engineOptions, llama });
  return {
    dir,
    file,
    llama,
    engine,
    write,
    load: (spec = {}) => engine.load({ id: "tiny", engine: "llamacpp", source: file, threads: 1, ...spec }),
    async close() {
      await engine.close();
      await llama.dispose();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A one-turn conversation. */
export const USER = (content: string): ChatTurn[] => [{ role: "user", content }];

/** Chat parameters with greedy decoding, no alternatives and a signal that never aborts. */
export function params(overrides: Partial<ChatParams> = {}): ChatParams {
  return { messages: USER("Hello"), maxTokens: 8, temperature: 0, topLogprobs: 0, signal: new AbortController().signal, ...overrides };
}

/** Runs a chat to the end: its token events, the final `done`, and the text. */
export async function run(model: LoadedModel, p: ChatParams): Promise<{ tokens: TokenEvent[]; done: DoneEvent; text: string }> {
  const tokens: TokenEvent[] = [];
  let done: DoneEvent | undefined;
  for await (const event of model.chat(p)) {
    if (done) throw new Error("an event after done");
    if (event.type === "token") tokens.push(event);
    else done = event;
  }
  if (!done) throw new Error("the chat ended without done");
  return { tokens, done, text: tokens.map((t) => t.text).join("") };
}

/** Rejects when `promise` takes longer than `ms` (a hung chat fails the test instead of the run). */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
