/** The llama.cpp engine's chat, on real inference over the tiny GGUF (CPU, one thread). */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { EngineError, type LoadedModel } from "./engine.ts";
import { LOGPROB_FLOOR } from "./llamacpp-generate.ts";
import { params, run, tinyFixture, USER, within, type TinyFixture } from "./llamacpp-test-support.ts";

let fx: TinyFixture;
let model: LoadedModel;

before(async () => {
  fx = await tinyFixture();
  model = await fx.load();
});

after(async () => {
  await fx.close();
});

test("info: the context and embedding sizes of the GGUF, memory attributed", () => {
  const info = model.info();
  assert.equal(info.id, "tiny");
  assert.equal(info.engine, "llamacpp");
  assert.equal(info.source, fx.file);
  assert.equal(info.contextLength, 1024); // min(trained 1024, 4096)
  assert.equal(info.embeddingLength, 64);
  assert.deepEqual(info.capabilities, { chat: true, embeddings: true });
  assert.ok((info.memoryBytes ?? 0) > 463_104, `memory ${info.memoryBytes}`); // more than the weights alone
});

test("greedy decoding is deterministic, with finite logprobs that match the top alternative", async () => {
  const p = params({ messages: USER("Tell me a story"), maxTokens: 12, topLogprobs: 5 });
  const first = await run(model, p);
  const second = await run(model, p);
  assert.equal(first.tokens.length, 12);
  assert.deepEqual(
    second.tokens.map((t) => t.bytes),
    first.tokens.map((t) => t.bytes),
  );
  assert.equal(second.text, first.text);
  for (const [i, t] of first.tokens.entries()) {
    assert.ok(Number.isFinite(t.logprob) && t.logprob <= 0 && t.logprob > LOGPROB_FLOOR, `token ${i} logprob ${t.logprob}`);
    assert.equal(t.topLogprobs.length, 5);
    const lps = t.topLogprobs.map((a) => a.logprob);
    assert.deepEqual(
      lps,
      [...lps].sort((a, b) => b - a),
      "alternatives are sorted",
    );
    // Greedy: the chosen token is the most likely one, so it heads the alternatives.
    assert.ok(t.logprob >= (lps[0] ?? -Infinity) - 1e-9);
    assert.ok(Math.abs(t.logprob - (lps[0] ?? 0)) < 1e-6);
    // The prefix-cached second run may differ in the last digits only.
    assert.ok(Math.abs((second.tokens[i]?.logprob ?? 0) - t.logprob) < 1e-3);
  }
  // The probabilities of the alternatives are a piece of one distribution.
  const mass = first.tokens[0]?.topLogprobs.reduce((s, a) => s + Math.exp(a.logprob), 0) ?? 0;
  assert.ok(mass > 0 && mass <= 1 + 1e-6);
});

test("without topLogprobs the tokens and logprobs are the same, with no alternatives", async () => {
  const withAlternatives = await run(model, params({ maxTokens: 6, topLogprobs: 3 }));
  const without = await run(model, params({ maxTokens: 6, topLogprobs: 0 }));
  assert.deepEqual(
    without.tokens.map((t) => t.bytes),
    withAlternatives.tokens.map((t) => t.bytes),
  );
  for (const [i, t] of without.tokens.entries()) {
    assert.deepEqual(t.topLogprobs, []);
    assert.ok(Math.abs(t.logprob - (withAlternatives.tokens[i]?.logprob ?? 0)) < 1e-3);
  }
});

test("maxTokens ends with finishReason length after exactly maxTokens tokens", async () => {
  for (const maxTokens of [1, 5]) {
    const { tokens, done } = await run(model, params({ maxTokens }));
    assert.equal(tokens.length, maxTokens);
    assert.deepEqual(done, { type: "done", finishReason: "length", promptTokens: done.promptTokens, completionTokens: maxTokens });
  }
});

test("countTokens counts the ChatML prompt the chat evaluates", async () => {
  const messages = USER("Hello, wörld!");
  const counted = await model.countTokens(messages);
  // <|im_start|> "user\n" <content bytes> <|im_end|> "\n" <|im_start|> "assistant\n": one token per byte.
  assert.equal(counted, 3 + Buffer.byteLength("user\nHello, wörld!\nassistant\n", "utf8"));
  const { done } = await run(model, params({ messages, maxTokens: 1 }));
  assert.equal(done.promptTokens, counted);
  const longer = await model.countTokens([{ role: "system", content: "Be brief." }, ...messages]);
  assert.equal(longer, counted + 2 + Buffer.byteLength("system\nBe brief.\n", "utf8"));
});

test("turns render through the GGUF's ChatML template: tool results as user turns, assistant prefill", async () => {
  const bytes = (s: string): number => Buffer.byteLength(s, "utf8");
  // "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\na<|im_end|>\n<|im_start|>user\n42<|im_end|>\n<|im_start|>assistant\n"
  const withTool = await model.countTokens([
    { role: "user", content: "q" },
    { role: "assistant", content: "a" },
    { role: "tool", content: "42" },
  ]);
  assert.equal(withTool, 7 + bytes("user\nq\nassistant\na\nuser\n42\nassistant\n"));
  // A trailing assistant turn is continued: "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\nSure"
  const prefill = await model.countTokens([
    { role: "user", content: "q" },
    { role: "assistant", content: "Sure" },
  ]);
  assert.equal(prefill, 3 + bytes("user\nq\nassistant\nSure"));
});

test("text is emitted only for whole UTF-8 characters; bytes always", async () => {
  const { tokens } = await run(model, params({ messages: USER("x"), maxTokens: 40 }));
  const bytes = tokens.flatMap((t) => t.bytes);
  assert.ok(
    tokens.every((t) => t.bytes.length === 1),
    "the tiny vocabulary emits single bytes",
  );
  assert.equal(tokens.map((t) => t.text).join(""), new TextDecoder().decode(Uint8Array.from(bytes)).replace(/\uFFFD$/, ""));
  // The random model starts with 0xC7, a lead byte: no text until the next byte decides it.
  assert.deepEqual(tokens[0]?.bytes, [0xc7]);
  assert.equal(tokens[0]?.text, "");
});

test("stop strings end the answer before the stop string", async () => {
  const full = await run(model, params({ maxTokens: 30 }));
  // A stop string spanning two printable tokens in the middle of the answer.
  const at = full.tokens.findIndex((t, i) => i >= 3 && /^[\x21-\x7e]$/.test(t.text) && /^[\x21-\x7e]$/.test(full.tokens[i + 1]?.text ?? ""));
  assert.ok(at > 0, `no printable pair in ${JSON.stringify(full.text)}`);
  const stop = (full.tokens[at]?.text ?? "") + (full.tokens[at + 1]?.text ?? "");
  const cutAt = full.text.indexOf(stop);
  const stopped = await run(model, params({ maxTokens: 30, stop: ["never-there", stop] }));
  assert.equal(stopped.text, full.text.slice(0, cutAt));
  assert.equal(stopped.done.finishReason, "stop");
  assert.ok(!stopped.text.includes(stop));
  // Tokens generated up to the end of the stop string are counted, not emitted.
  assert.ok(stopped.done.completionTokens >= stopped.tokens.length);
  assert.ok(stopped.done.completionTokens < 30);
});

test("the end-of-generation token ends the turn with finishReason stop", async () => {
  const first = await run(model, params({ messages: USER("x"), maxTokens: 3 }));
  const third = first.tokens[2]?.bytes[0];
  assert.ok(third !== undefined);
  // The same weights, with EOS set to the byte token the model generates third.
  const file = await fx.write("eos.gguf", { eosTokenId: 3 + third });
  const eosModel = await fx.load({ id: "tiny-eos", source: file });
  try {
    const { tokens, done } = await run(eosModel, params({ messages: USER("x"), maxTokens: 10 }));
    assert.deepEqual(
      tokens.map((t) => t.bytes),
      first.tokens.slice(0, 2).map((t) => t.bytes),
    );
    assert.deepEqual(done, { type: "done", finishReason: "stop", promptTokens: first.done.promptTokens, completionTokens: 2 });
  } finally {
    await eosModel.unload();
  }
});

test("sampling: one seed gives one answer; near-zero temperature or top-p is greedy", async () => {
  const greedy = await run(model, params({ maxTokens: 10 }));
  const sampled = (seed: number, extra = {}) => run(model, params({ maxTokens: 10, temperature: 1.5, seed, topLogprobs: 2, ...extra }));
  const a = await sampled(7);
  const b = await sampled(7);
  assert.deepEqual(
    b.tokens.map((t) => t.bytes),
    a.tokens.map((t) => t.bytes),
  );
  const others = await Promise.all([8, 9, 10].map((s) => sampled(s)));
  assert.ok(
    others.some((o) => o.text !== a.text),
    "different seeds give different answers",
  );
  assert.notEqual(a.text, greedy.text);
  for (const t of a.tokens) assert.ok(t.logprob <= 0 && Number.isFinite(t.logprob));

  const cold = await run(model, params({ maxTokens: 10, temperature: 0.001, seed: 1 })); // closest pair: 0.045 nats apart
  assert.equal(cold.text, greedy.text);
  const nucleus = await sampled(7, { topP: 1e-6 });
  assert.equal(nucleus.text, greedy.text);
});

test("an abort stops generation within a token and frees the sequence", async () => {
  const controller = new AbortController();
  let seen = 0;
  const started = performance.now();
  await assert.rejects(
    async () => {
      for await (const event of model.chat(params({ maxTokens: 900, signal: controller.signal }))) {
        if (event.type === "token" && ++seen === 3) controller.abort();
      }
    },
    (err: Error) => err.name === "AbortError",
  );
  assert.equal(seen, 3, "no token after the abort");
  assert.ok(performance.now() - started < 5000);
  // The model's single sequence is free again.
  const { tokens } = await within(run(model, params({ maxTokens: 2 })), 10_000, "chat after abort");
  assert.equal(tokens.length, 2);
  // The client's own abort reason comes back as is.
  const gone = new AbortController();
  const reason = new Error("client went away");
  await assert.rejects(
    async () => {
      for await (const event of model.chat(params({ maxTokens: 900, signal: gone.signal }))) if (event.type === "token") gone.abort(reason);
    },
    (err: unknown) => err === reason,
  );
  // Aborted before starting: nothing generated.
  await assert.rejects(run(model, params({ signal: AbortSignal.abort() })), (err: Error) => err.name === "AbortError");
});

test("concurrent chats on one sequence queue and give the sequential answers", async () => {
  const prompts = ["alpha", "beta", "gamma"].map((p) => params({ messages: USER(p), maxTokens: 6, topLogprobs: 1 }));
  const sequential = [];
  for (const p of prompts) sequential.push(await run(model, p));
  const concurrent = await within(Promise.all(prompts.map((p) => run(model, p))), 20_000, "concurrent chats");
  assert.deepEqual(
    concurrent.map((r) => r.text),
    sequential.map((r) => r.text),
  );
});

test("a model with several sequences runs chats in parallel with the same answers", async () => {
  const parallel = await fx.load({ id: "tiny-x3", sequences: 3 });
  try {
    const prompts = ["one", "two", "three", "four"].map((p) => params({ messages: USER(p), maxTokens: 6 }));
    const expected = [];
    for (const p of prompts) expected.push((await run(model, p)).text);
    const got = await within(Promise.all(prompts.map((p) => run(parallel, p))), 20_000, "parallel chats");
    assert.deepEqual(
      got.map((r) => r.text),
      expected,
    );
  } finally {
    await parallel.unload();
  }
});

test("a prompt longer than one batch (512) is evaluated batch by batch", async () => {
  const messages = USER("long ".repeat(180)); // 919 tokens
  const p = params({ messages, maxTokens: 5 });
  const first = await run(model, p);
  assert.equal(first.done.promptTokens, 919);
  assert.equal(first.tokens.length, 5);
  const other = await run(model, params({ maxTokens: 1 })); // evicts the cached prefix
  assert.equal(other.tokens.length, 1);
  assert.deepEqual((await run(model, p)).text, first.text);
});

test("a prompt longer than the context is refused before generating", async () => {
  const small = await fx.load({ id: "tiny-ctx", contextLength: 256 });
  try {
    assert.equal(small.info().contextLength, 256);
    await assert.rejects(run(small, params({ messages: USER("x".repeat(400)) })), (err: unknown) => err instanceof EngineError && err.code === "unsupported");
    // Generation stops with "length" where the context ends.
    const prompt = USER("y".repeat(256 - 20 - 3));
    const { tokens, done } = await run(small, params({ messages: prompt, maxTokens: 50 }));
    assert.equal(done.finishReason, "length");
    assert.equal(done.promptTokens + tokens.length, 256);
  } finally {
    await small.unload();
  }
});
