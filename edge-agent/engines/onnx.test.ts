/**
 * The ONNX engine with real ONNX Runtime sessions over tiny models built in the test
 * (`test/support/onnx-model-builder.ts`: `Gather(embedding_table, input_ids)`, seeded table, no
 * downloads). Expected vectors are computed here from the table rows of the hand-worked token
 * ids, mean-pooled and normalized in float64, and compared within float32 rounding.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test, type TestContext } from "node:test";
import { embeddingLookupModel, encodeOnnxModel, OnnxDataType, seededTable, type LookupModelOptions } from "../../test/support/onnx-model-builder.ts";
import { EngineError, type ModelSpec } from "./engine.ts";
import { createOnnxEngine, planIo, type OnnxEngineOptions } from "./onnx.ts";

const HIDDEN = 8;
const VOCAB: Record<string, number> = { "[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, the: 4, sky: 5, is: 6, blue: 7, grass: 8, green: 9, "!": 10 };
const TABLE = seededTable(Object.keys(VOCAB).length, HIDDEN, 42);
const WORDPIECE = { type: "wordpiece", vocab: VOCAB, unk: "[UNK]", cls: "[CLS]", sep: "[SEP]", pad: "[PAD]", lowercase: true, max_length: 128 };

/** normalize(mean of the table rows of `ids`), in float64. */
function expected(table: Float32Array, ids: number[]): number[] {
  const mean = new Array<number>(HIDDEN).fill(0);
  for (const id of ids) for (let h = 0; h < HIDDEN; h += 1) mean[h] = (mean[h] ?? 0) + (table[id * HIDDEN + h] ?? 0) / ids.length;
  const norm = Math.hypot(...mean);
  return mean.map((x) => x / norm);
}

function assertClose(actual: number[] | undefined, wanted: number[], label: string): void {
  assert.ok(actual, `${label}: missing`);
  assert.equal(actual.length, wanted.length, `${label}: length`);
  actual.forEach((x, i) => assert.ok(Math.abs(x - (wanted[i] ?? Number.NaN)) < 1e-6, `${label}[${i}]: ${x} vs ${wanted[i]}`));
}

interface Files {
  dir: string;
  model(name: string, options?: Partial<LookupModelOptions>): Promise<string>;
  json(name: string, value: unknown): Promise<string>;
}

async function files(t: TestContext): Promise<Files> {
  const dir = await mkdtemp(path.join(tmpdir(), "gearbox-onnx-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return {
    dir,
    async model(name, options = {}) {
      const file = path.join(dir, name);
      await writeFile(file, embeddingLookupModel({ table: TABLE, hidden: HIDDEN, ...options }));
      return file;
    },
    async json(name, value) {
      const file = path.join(dir, name);
      await writeFile(file, JSON.stringify(value));
      return file;
    },
  };
}

async function loaded(t: TestContext, model: Partial<LookupModelOptions> = {}, tokenizer: unknown = WORDPIECE, engineOptions: OnnxEngineOptions = {}) {
  const f = await files(t);
  const engine = createOnnxEngine(engineOptions);
  t.after(() => engine.close());
  const spec: ModelSpec = { id: "tiny", engine: "onnx", source: await f.model("tiny.onnx", model), tokenizer: await f.json("tokenizer.json", tokenizer) };
  return { engine, spec, model: await engine.load(spec), files: f };
}

const never = new AbortController().signal;

async function rejectsWith(promise: Promise<unknown>, code: EngineError["code"], message?: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof EngineError, `expected EngineError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    if (message) assert.match(err.message, message);
    return true;
  });
}

test("one text: the mean of its tokens' table rows, normalized; info from the output shape", async (t) => {
  const { model } = await loaded(t);
  const { vectors, promptTokens } = await model.embed(["The sky is blue!"], never);
  assertClose(vectors[0], expected(TABLE, [2, 4, 5, 6, 7, 10, 3]), "vector");
  assert.equal(promptTokens, 7);
  assert.ok(Math.abs(Math.hypot(...(vectors[0] ?? [])) - 1) < 1e-9, "unit length");
  assert.deepEqual(model.info(), {
    id: "tiny",
    engine: "onnx",
    source: model.info().source,
    contextLength: 128,
    capabilities: { chat: false, embeddings: true },
    embeddingLength: HIDDEN,
  });
});

test("a batch of texts of different lengths: padding is masked out, each row equals its text alone", async (t) => {
  const { model } = await loaded(t);
  const texts = ["The sky is blue!", "grass", "green grass is green"];
  const { vectors, promptTokens } = await model.embed(texts, never);
  const ids = [
    [2, 4, 5, 6, 7, 10, 3],
    [2, 8, 3],
    [2, 9, 8, 6, 9, 3],
  ];
  ids.forEach((row, i) => assertClose(vectors[i], expected(TABLE, row), `text ${i}`));
  assert.equal(promptTokens, 7 + 3 + 6);
  const padded = expected(TABLE, [2, 8, 3, 0, 0, 0, 0]);
  assert.ok(Math.abs((vectors[1]?.[0] ?? 0) - (padded[0] ?? 0)) > 1e-3, "the pad row would have changed the short text's vector");
  for (const [i, text] of texts.entries()) assertClose((await model.embed([text], never)).vectors[0], vectors[i] ?? [], `alone ${i}`);
});

test("batches are split at batchSize and keep their order", async (t) => {
  const { model } = await loaded(t, {}, WORDPIECE, { batchSize: 2 });
  const texts = ["the", "sky", "is", "blue", "grass"];
  const { vectors } = await model.embed(texts, never);
  assert.equal(vectors.length, 5);
  texts.forEach((text, i) => assertClose(vectors[i], expected(TABLE, [2, VOCAB[text] ?? -1, 3]), text));
});

test("a model that pools itself (sentence_embedding via ReduceMean) is used as is, then normalized", async (t) => {
  const { model } = await loaded(t, { output: "sentence_embedding", tokenTypeIds: true });
  const { vectors } = await model.embed(["the sky"], never);
  assertClose(vectors[0], expected(TABLE, [2, 4, 5, 3]), "pooled by the model");
  assert.equal(model.info().embeddingLength, HIDDEN);
});

test("byte-level tokenizer and int32 ids", async (t) => {
  const table = seededTable(256 + 3, HIDDEN, 7);
  const f = await files(t);
  const engine = createOnnxEngine();
  t.after(() => engine.close());
  const model = await engine.load({
    id: "bytes",
    engine: "onnx",
    source: await f.model("bytes.onnx", { table, idType: OnnxDataType.INT32 }),
    tokenizer: await f.json("bytes.json", { type: "bytes", offset: 3, pad_id: 0 }),
  });
  const { vectors, promptTokens } = await model.embed(["hé", "a"], never);
  assertClose(vectors[0], expected(table, [104 + 3, 0xc3 + 3, 0xa9 + 3]), "hé");
  assertClose(vectors[1], expected(table, [97 + 3]), "a");
  assert.equal(promptTokens, 4);
});

test("planIo: a symbolic hidden size leaves embeddingLength to the first answer; a wrong rank or type is refused", () => {
  const ids = { isTensor: true, type: "int64", shape: ["batch", "seq"] } as const;
  const inputs = [
    { name: "input_ids", ...ids },
    { name: "attention_mask", ...ids },
  ];
  const symbolic = planIo(inputs, [{ name: "last_hidden_state", isTensor: true, type: "float32", shape: ["batch", "seq", "hidden"] }]);
  assert.ok(symbolic.ok);
  assert.equal(symbolic.value.embeddingLength, undefined);
  assert.deepEqual(symbolic.value.output, { name: "last_hidden_state", kind: "tokens" });
  const pooled = planIo(inputs, [
    { name: "last_hidden_state", isTensor: true, type: "float32", shape: [] },
    { name: "embeddings", isTensor: true, type: "float32", shape: ["batch", 384] },
  ]);
  assert.ok(pooled.ok);
  assert.deepEqual([pooled.value.output.name, pooled.value.embeddingLength], ["embeddings", 384], "a pooled output wins");
  assert.deepEqual(
    planIo(
      [{ name: "input_ids", isTensor: true, type: "float32", shape: [] }],
      [{ name: "sentence_embedding", isTensor: true, type: "float16", shape: ["batch", "seq", 8] }],
    ),
    {
      ok: false,
      errors: ["input 'input_ids': expected an int64 or int32 tensor", "output 'sentence_embedding': expected a float32 tensor"],
    },
  );
  assert.deepEqual(
    planIo([{ name: "attention_mask", ...ids }], [{ name: "sentence_embedding", isTensor: true, type: "float32", shape: ["batch", "seq", 8] }]),
    {
      ok: false,
      errors: ["input 'input_ids': missing", "output 'sentence_embedding': expected rank 2, got [batch, seq, 8]"],
    },
  );
});

test("contextLength caps the tokenizer's max_length; countTokens uses the tokenizer", async (t) => {
  const f = await files(t);
  const engine = createOnnxEngine();
  t.after(() => engine.close());
  const model = await engine.load({ id: "t", engine: "onnx", source: await f.model("m.onnx"), tokenizer: await f.json("t.json", WORDPIECE), contextLength: 4 });
  assert.equal(model.info().contextLength, 4);
  assertClose((await model.embed(["the sky is blue"], never)).vectors[0], expected(TABLE, [2, 4, 5, 3]), "cut to 4");
  assert.equal(
    await model.countTokens([
      { role: "user", content: "the sky is blue" },
      { role: "user", content: "grass" },
    ]),
    4 + 3,
  );
});

test("chat is unsupported", async (t) => {
  const { model } = await loaded(t);
  const iterate = async () => {
    for await (const _ of model.chat({ messages: [{ role: "user", content: "hi" }], maxTokens: 1, temperature: 0, topLogprobs: 0, signal: never }))
      assert.fail("no events");
  };
  await rejectsWith(iterate(), "unsupported", /does not chat/);
});

test("an aborted signal stops before running; unload frees the model, which then refuses work", async (t) => {
  const { model } = await loaded(t);
  await assert.rejects(model.embed(["the"], AbortSignal.abort()), { name: "AbortError" });
  await model.unload();
  await rejectsWith(model.embed(["the"], never), "unavailable", /unloaded/);
  await model.unload();
});

test("load_failed: a file that is not an ONNX model, and a missing one", async (t) => {
  const f = await files(t);
  const engine = createOnnxEngine();
  t.after(() => engine.close());
  const tokenizer = await f.json("t.json", WORDPIECE);
  const garbage = path.join(f.dir, "garbage.onnx");
  await writeFile(garbage, "this is not a protobuf model\n");
  await rejectsWith(engine.load({ id: "x", engine: "onnx", source: garbage, tokenizer }), "load_failed", /garbage\.onnx/);
  await rejectsWith(engine.load({ id: "x", engine: "onnx", source: path.join(f.dir, "absent.onnx"), tokenizer }), "load_failed", /absent\.onnx/);
});

test("load_failed: no tokenizer, an unreadable one, one with bad fields", async (t) => {
  const f = await files(t);
  const engine = createOnnxEngine();
  t.after(() => engine.close());
  const source = await f.model("m.onnx");
  await rejectsWith(engine.load({ id: "x", engine: "onnx", source }), "load_failed", /needs 'tokenizer'/);
  await rejectsWith(engine.load({ id: "x", engine: "onnx", source, tokenizer: path.join(f.dir, "none.json") }), "load_failed", /none\.json/);
  await rejectsWith(
    engine.load({ id: "x", engine: "onnx", source, tokenizer: await f.json("bad.json", { type: "wordpiece", vocab: {} }) }),
    "load_failed",
    /vocab: empty/,
  );
});

test("load_failed: a model whose inputs or outputs the engine cannot drive, each named", async (t) => {
  const { engine, files: f } = await loaded(t);
  const tokenizer = await f.json("t2.json", WORDPIECE);
  const file = path.join(f.dir, "classifier.onnx");
  const ids = { elemType: OnnxDataType.INT64, shape: ["batch", "seq"] };
  await writeFile(
    file,
    encodeOnnxModel({
      inputs: [
        { name: "input_ids", ...ids },
        { name: "pixel_values", ...ids },
      ],
      outputs: [{ name: "logits", elemType: OnnxDataType.FLOAT, shape: ["batch", "seq", HIDDEN] }],
      nodes: [{ opType: "Gather", inputs: ["embedding_table", "input_ids"], outputs: ["logits"] }],
      initializers: [{ name: "embedding_table", dims: [TABLE.length / HIDDEN, HIDDEN], values: TABLE }],
    }),
  );
  await rejectsWith(
    engine.load({ id: "x", engine: "onnx", source: file, tokenizer }),
    "load_failed",
    /input 'pixel_values': not one the engine feeds.*outputs: none of sentence_embedding, embeddings, last_hidden_state \(the model has logits\)/,
  );
});
