/** The llama.cpp engine's loading, embeddings and unloading, on the tiny GGUF (CPU, one thread). */
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, test } from "node:test";
import { EngineError, type LoadedModel } from "./engine.ts";
import { DisposedError } from "node-llama-cpp";
import { createLlamaCppEngine, defaultThreads } from "./llamacpp.ts";
import { toEngineError } from "./llamacpp-model.ts";
import { params, run, tinyFixture, USER, within, type TinyFixture } from "./llamacpp-test-support.ts";

let fx: TinyFixture;
let model: LoadedModel;
const never = new AbortController().signal;

before(async () => {
  fx = await tinyFixture();
  model = await fx.load();
});

after(async () => {
  await fx.close();
});

const isEngineError = (code: EngineError["code"], match?: RegExp) => (err: unknown) =>
  err instanceof EngineError && err.code === code && (match === undefined || match.test(err.message));

test("embed: unit vectors of n_embd, deterministic, independent of the batch", async () => {
  const { vectors, promptTokens } = await model.embed(["hello", "wörld", "hello"], never);
  assert.equal(vectors.length, 3);
  for (const v of vectors) {
    assert.equal(v.length, 64);
    assert.ok(Math.abs(Math.hypot(...v) - 1) < 1e-9);
  }
  assert.deepEqual(vectors[2], vectors[0]);
  assert.notDeepEqual(vectors[1], vectors[0]);
  assert.equal(promptTokens, 5 + 6 + 5); // one token per UTF-8 byte, no BOS for this vocabulary
  const alone = await model.embed(["wörld"], never);
  assert.deepEqual(alone.vectors[0], vectors[1]);
});

test("embed: mean pooling unless the GGUF declares its own", async () => {
  const lastFile = await fx.write("last-pooled.gguf", { poolingType: 3 });
  const lastPooled = await fx.load({ id: "tiny-last", source: lastFile });
  try {
    const mean = await model.embed(["a", "abc"], never);
    const last = await lastPooled.embed(["a", "abc"], never);
    // One token: its mean is itself. Several: the mean differs from the last token's state.
    assert.deepEqual(last.vectors[0], mean.vectors[0]);
    assert.notDeepEqual(last.vectors[1], mean.vectors[1]);
  } finally {
    await lastPooled.unload();
  }
});

test("embed: an empty or too long input, or an aborted signal, is refused", async () => {
  await assert.rejects(model.embed(["ok", ""], never), isEngineError("unsupported", /input 1 is empty/));
  await assert.rejects(model.embed(["x".repeat(3000)], never), isEngineError("unsupported", /3000 tokens/));
  await assert.rejects(model.embed(["ok"], AbortSignal.abort()), (err: Error) => err.name === "AbortError");
  // Still usable after refusals.
  assert.equal((await model.embed(["ok"], never)).vectors.length, 1);
});

test("a GGUF without a chat template falls back to node-llama-cpp's guess and still chats", async () => {
  const file = await fx.write("no-template.gguf", { chatTemplate: false });
  const plain = await fx.load({ id: "tiny-plain", source: file });
  try {
    const messages = USER("Hello");
    assert.notEqual(await plain.countTokens(messages), await model.countTokens(messages));
    const { tokens, done } = await run(plain, params({ messages, maxTokens: 4 }));
    assert.ok(tokens.length > 0 || done.finishReason === "stop");
    assert.equal(done.promptTokens, await plain.countTokens(messages));
  } finally {
    await plain.unload();
  }
});

test("without prefix reuse every run evaluates the prompt afresh: identical logprobs", async () => {
  const fresh = createLlamaCppEngine({ llama: fx.llama, reusePrefix: false });
  try {
    const m = await fresh.load({ id: "tiny", engine: "llamacpp", source: fx.file, threads: 1 });
    const p = params({ maxTokens: 6, topLogprobs: 3 });
    const a = await run(m, p);
    const b = await run(m, p);
    assert.deepEqual(b.tokens, a.tokens);
  } finally {
    await fresh.close();
  }
});

test("load failures are EngineError load_failed with the cause", async () => {
  const garbage = path.join(fx.dir, "garbage.gguf");
  await writeFile(garbage, Buffer.from("this is not a GGUF file at all, just text".repeat(100)));
  const truncated = path.join(fx.dir, "truncated.gguf");
  await writeFile(truncated, (await readFile(fx.file)).subarray(0, 200_000));
  for (const source of [garbage, truncated, path.join(fx.dir, "missing.gguf"), fx.dir]) {
    await assert.rejects(fx.load({ source }), (err: unknown) => {
      assert.ok(err instanceof EngineError, String(err));
      assert.equal(err.code, "load_failed");
      assert.ok(err.message.includes(source), err.message);
      assert.ok(err.cause instanceof Error);
      return true;
    });
  }
  // An hf: URI that is not in the models directory, downloads off: no network needed to fail.
  const offline = createLlamaCppEngine({ llama: fx.llama, modelsDirectory: fx.dir, download: false });
  await assert.rejects(
    offline.load({ id: "hf", engine: "llamacpp", source: "hf:example/missing-GGUF:Q4_K_M" }),
    isEngineError("load_failed", /hf:example\/missing-GGUF/),
  );
  await offline.close();
  await assert.rejects(fx.load({ threads: 0 }), isEngineError("load_failed", /threads must be a positive integer/));
  await assert.rejects(fx.load({ engine: "ollama" }), isEngineError("unsupported"));
});

test("unload: later calls fail cleanly; a running chat stops with unavailable", async () => {
  const m = await fx.load({ id: "tiny-unload" });
  let seen = 0;
  const chat = (async () => {
    for await (const event of m.chat(params({ maxTokens: 900 }))) if (event.type === "token") seen++;
  })();
  while (seen < 2) await new Promise((r) => setTimeout(r, 1));
  const unloaded = m.unload();
  assert.equal(m.unload(), unloaded, "unload is idempotent");
  await assert.rejects(within(chat, 10_000, "chat during unload"), isEngineError("unavailable"));
  assert.ok(seen < 900);
  await within(unloaded, 10_000, "unload");
  await assert.rejects(run(m, params()), isEngineError("unavailable"));
  await assert.rejects(m.countTokens(USER("x")), isEngineError("unavailable"));
  await assert.rejects(m.embed(["x"], never), isEngineError("unavailable"));
});

test("close unloads every model and refuses new loads", async () => {
  const engine = createLlamaCppEngine({ llama: fx.llama });
  const m = await engine.load({ id: "a", engine: "llamacpp", source: fx.file, threads: 1 });
  await engine.close();
  await assert.rejects(run(m, params()), isEngineError("unavailable"));
  await assert.rejects(engine.load({ id: "b", engine: "llamacpp", source: fx.file }), isEngineError("unavailable"));
  // The shared backend was not the engine's to dispose.
  assert.equal(fx.llama.disposed, false);
});

test("default threads leave a core free, at least 1 and at most 8", () => {
  assert.deepEqual([1, 2, 3, 4, 8, 9, 10, 64].map(defaultThreads), [1, 1, 2, 3, 7, 8, 8, 8]);
});

test("errors: native failures are engine_crashed, disposal unavailable, aborts and EngineErrors kept", () => {
  const native = new Error("GGML_ASSERT failed");
  const crashed = toEngineError(native, "generating");
  assert.ok(crashed instanceof EngineError && crashed.code === "engine_crashed");
  assert.equal(crashed.cause, native);
  assert.match(crashed.message, /generating failed: GGML_ASSERT failed/);
  assert.equal((toEngineError(new DisposedError(), "embedding") as EngineError).code, "unavailable");
  const abort = new DOMException("aborted", "AbortError");
  assert.equal(toEngineError(abort, "generating"), abort);
  const own = new EngineError("x", "unsupported");
  assert.equal(toEngineError(own, "generating"), own);
});
