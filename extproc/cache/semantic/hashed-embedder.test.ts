import assert from "node:assert/strict";
import { test } from "node:test";
import { HASHED_DIMENSIONS, HASHED_EMBEDDER_NAME, HashedEmbedder, normaliseQuestion, stem } from "./hashed-embedder.ts";

const embedder = new HashedEmbedder();
const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * (b[i] ?? 0), 0);
const sim = (a: string, b: string) => cos(embedder.embedOne(a), embedder.embedOne(b));

test("deterministic: the same text, the same vector, across instances and batches", async () => {
  const [a, b] = await embedder.embed(["How do I reset my password?", "今天天气怎么样"]);
  const again = await new HashedEmbedder().embed(["How do I reset my password?"]);
  assert.deepEqual(again[0], a);
  assert.deepEqual(embedder.embedOne("今天天气怎么样"), b);
  assert.equal(embedder.name, HASHED_EMBEDDER_NAME);
  assert.equal(a?.length, HASHED_DIMENSIONS);
});

test("vectors are unit length; an empty or symbol-only text is the zero vector", () => {
  for (const text of ["What's the capital of France?", "如何学习编程", "a", "Mixed 中英 text 123"]) {
    const v = embedder.embedOne(text);
    assert.ok(Math.abs(Math.hypot(...v) - 1) < 1e-5, text);
  }
  assert.ok(embedder.embedOne("?!").every((x) => x === 0));
  assert.equal(new HashedEmbedder({ dimensions: 256 }).embedOne("hello").length, 256);
  assert.notEqual(new HashedEmbedder({ dimensions: 256 }).name, HASHED_EMBEDDER_NAME, "another size is another vector space");
});

test("case, width and contractions do not change the vector", () => {
  assert.ok(sim("What's the WEATHER today?", "what is the weather today") > 0.999);
  assert.ok(sim("ＡＢＣ　ｔｅｓｔ", "abc test") > 0.999);
  assert.equal(normaliseQuestion("I can't, it won't, don't"), "i can not, it will not, do not");
  assert.equal(stem("questions"), "question");
  assert.equal(stem("learning"), "learn");
});

test("English and Chinese paraphrases are closer than unrelated questions", () => {
  const cases: [string, string, string][] = [
    ["How do I learn Python quickly?", "What is the fastest way to learn Python?", "How tall is Mount Everest?"],
    ["What is the weather like today?", "How is the weather today?", "What is the best pizza topping?"],
    ["How can I lose weight fast?", "What is the fastest way to lose weight?", "Who wrote the Odyssey?"],
    ["今天天气怎么样", "今天的天气如何", "明天去哪里玩"],
    ["怎么学习英语口语", "如何学好英语口语", "手机充不进电怎么办"],
  ];
  for (const [a, paraphrase, unrelated] of cases) {
    const near = sim(a, paraphrase);
    const far = sim(a, unrelated);
    assert.ok(near > far + 0.2, `${a}: paraphrase ${near.toFixed(3)} vs unrelated ${far.toFixed(3)}`);
  }
});

test("word order counts a little (bigrams): swapped roles are not identical", () => {
  assert.ok(sim("Does the dog bite the man?", "Does the man bite the dog?") < 0.99);
});

test("an aborted signal rejects", async () => {
  const controller = new AbortController();
  controller.abort(new Error("gone"));
  await assert.rejects(embedder.embed(["x"], controller.signal), /gone/);
});
