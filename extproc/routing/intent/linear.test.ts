import assert from "node:assert/strict";
import { test } from "node:test";
import { BUCKET_BITS, HEAD_UNITS, MAX_FEATURES, TAIL_UNITS, textFeatures } from "./features.ts";
import { INTENTS } from "./intents.ts";
import { WEIGHTS_FORMAT, encodeWeights, loadModel } from "./linear.ts";

test("features: case, digits and whitespace runs do not matter; buckets are in range", () => {
  const a = new Int32Array(MAX_FEATURES);
  const b = new Int32Array(MAX_FEATURES);
  const n = textFeatures("Hello   World 42", a);
  assert.equal(textFeatures("hello world 97", b), n);
  assert.deepEqual(a.slice(0, n), b.slice(0, n));
  for (const x of a.slice(0, n)) assert.ok(x >= 0 && x < 1 << BUCKET_BITS);
  assert.equal(textFeatures("", a), 0);
  assert.ok(textFeatures("x ".repeat(50_000), a) <= MAX_FEATURES);
});

test("features: word order counts, and a long text is read on its head and tail", () => {
  const a = new Int32Array(MAX_FEATURES);
  const b = new Int32Array(MAX_FEATURES);
  const n = textFeatures("dog bites man", a);
  assert.equal(textFeatures("man bites dog", b), n);
  assert.notDeepEqual([...a.slice(0, n)].sort(), [...b.slice(0, n)].sort());
  // A word in the middle of a long text is not read; its opening and its ending are.
  const filler = " filler".repeat(HEAD_UNITS + TAIL_UNITS);
  const text = (middle: string, last: string): string => `open${filler} ${middle}${filler} ${last}`;
  const long = textFeatures(text("filler", "close"), a);
  assert.equal(textFeatures(text("other", "close"), b), long);
  assert.deepEqual(a.slice(0, long), b.slice(0, long), "a word deep in the middle changes nothing");
  assert.notDeepEqual(a.slice(0, long), b.slice(0, textFeatures(text("filler", "shut"), b)), "the last word counts");
});

test("weights round-trip through int8 encoding, and bad files are refused with named fields", () => {
  const w = new Float32Array((1 << BUCKET_BITS) * INTENTS.length);
  // Push every bucket towards `math`: any text is then math.
  for (let b = 0; b < 1 << BUCKET_BITS; b++) w[b * INTENTS.length + INTENTS.indexOf("math")] = 2;
  const file = encodeWeights(INTENTS, w, new Array<number>(INTENTS.length).fill(0), "test");
  assert.equal(file.format, WEIGHTS_FORMAT);
  const model = loadModel(file);
  assert.ok(model.ok);
  if (model.ok) assert.equal(model.value.predict("anything at all").intent, "math");
  const bad = loadModel({ ...file, bucketBits: 10, labels: ["nope"], weights: "" });
  assert.ok(!bad.ok);
  if (!bad.ok)
    assert.ok(
      bad.errors.some((e) => e.startsWith("bucketBits")) && bad.errors.some((e) => e.startsWith("labels")) && bad.errors.some((e) => e.startsWith("weights")),
    );
});
