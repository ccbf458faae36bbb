/** The tiny GGUF: a well-formed file that llama.cpp (through node-llama-cpp) really runs. */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { getLlama, LlamaLogLevel, readGgufFileInfo, type Llama, type LlamaModel, type Token } from "node-llama-cpp";
import { buildTinyGguf, CHATML_TEMPLATE, TINY_MODEL, writeTinyGguf } from "./tiny-gguf.ts";

let dir: string;
let file: string;
let llama: Llama;
let model: LlamaModel;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "tiny-gguf-"));
  file = path.join(dir, "tiny.gguf");
  await writeTinyGguf(file);
  llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
  model = await llama.loadModel({ modelPath: file });
});

after(async () => {
  await model.dispose();
  await llama.dispose();
  await rm(dir, { recursive: true, force: true });
});

test("the file is GGUF v3 with the llama hyper-parameters, vocabulary and template", async () => {
  const bytes = await readFile(file);
  assert.equal(bytes.subarray(0, 4).toString("latin1"), "GGUF");
  assert.equal(bytes.readUInt32LE(4), 3);
  const info = await readGgufFileInfo(file, { sourceType: "filesystem" });
  assert.equal(info.version, 3);
  const md = info.metadata;
  assert.equal(md.general.architecture, "llama");
  assert.equal(md.general.name, "gearbox-tiny-llama");
  assert.equal(md.general.alignment, 32);
  const llamaMd = (md as unknown as { llama: Record<string, unknown> }).llama;
  assert.deepEqual(
    {
      context: llamaMd.context_length,
      embd: llamaMd.embedding_length,
      blocks: llamaMd.block_count,
      ff: llamaMd.feed_forward_length,
      rope: (llamaMd.rope as Record<string, unknown>).dimension_count,
      heads: (llamaMd.attention as Record<string, unknown>).head_count,
      kvHeads: (llamaMd.attention as Record<string, unknown>).head_count_kv,
    },
    { context: 1024, embd: 64, blocks: 2, ff: 128, rope: 16, heads: 4, kvHeads: 4 },
  );
  const tok = md.tokenizer;
  assert.equal(tok.ggml.model, "llama");
  assert.equal(tok.ggml.tokens.length, TINY_MODEL.nVocab);
  assert.deepEqual(tok.ggml.tokens.slice(0, 4), ["<unk>", "<s>", "</s>", "<0x00>"]);
  assert.deepEqual(tok.ggml.tokens.slice(257), ["<0xFE>", "<0xFF>", "<|im_start|>", "<|im_end|>", "\u2581"]);
  assert.deepEqual(tok.ggml.token_type.slice(0, 4), [2, 3, 3, 6]);
  assert.deepEqual(tok.ggml.token_type.slice(258), [6, 3, 3, 1]);
  assert.equal(tok.ggml.bos_token_id, 1);
  assert.equal(tok.ggml.eos_token_id, 260);
  assert.equal(tok.chat_template, CHATML_TEMPLATE);

  const tensors = info.fullTensorInfo ?? [];
  assert.equal(tensors.length, 1 + 9 * 2 + 2);
  const dims = Object.fromEntries(tensors.map((t) => [t.name, t.dimensions.map(Number)]));
  assert.deepEqual(dims["token_embd.weight"], [64, 262]);
  assert.deepEqual(dims["output.weight"], [64, 262]);
  assert.deepEqual(dims["blk.1.ffn_gate.weight"], [64, 128]);
  assert.deepEqual(dims["blk.1.ffn_down.weight"], [128, 64]);
  assert.deepEqual(dims["blk.0.attn_norm.weight"], [64]);
  for (const t of tensors) assert.equal(Number(t.offset) % 32, 0, `${t.name} is aligned`);
  // An aligned header, then 115,776 F32 values (all tensors are multiples of 32 bytes).
  const values = 2 * 64 * 262 + 2 * (4 * 64 * 64 + 3 * 64 * 128 + 2 * 64) + 64;
  assert.ok(bytes.length > values * 4 && bytes.length < values * 4 + 16384, `size ${bytes.length}`);
  assert.equal((bytes.length - values * 4) % 32, 0);
});

test("one seed gives one file; another seed other weights", () => {
  assert.ok(buildTinyGguf({ seed: 5 }).equals(buildTinyGguf({ seed: 5 })));
  assert.ok(!buildTinyGguf({ seed: 5 }).equals(buildTinyGguf({ seed: 6 })));
  assert.equal(buildTinyGguf({ seed: 5 }).length, buildTinyGguf({ seed: 6 }).length);
});

test("node-llama-cpp loads it with the declared shape and special tokens", () => {
  assert.equal(model.trainContextSize, 1024);
  assert.equal(model.embeddingVectorSize, 64);
  assert.equal(model.tokens.bos, 1);
  assert.equal(model.tokens.eos, 260);
  assert.equal(model.isEogToken(260 as Token), true);
  assert.equal(model.getTokenAttributes(3 as Token).byte, true);
  assert.equal(model.getTokenAttributes(259 as Token).control, true);
});

test("UTF-8 text round-trips through tokenize/detokenize, one token per byte", () => {
  for (const text of ["hello world", "héllo wörld ✓", "日本語のテキスト", "emoji 😀👍🏽\n\ttabs", "  two  spaces ", "\u0000\u007f"]) {
    const tokens = model.tokenize(text);
    assert.equal(tokens.length, Buffer.byteLength(text, "utf8"), text);
    assert.equal(model.detokenize(tokens), text);
  }
  // Spaces are the `▁` piece; every other byte is its byte token.
  assert.deepEqual(model.tokenize("a b"), [0x61 + 3, 261, 0x62 + 3]);
  assert.deepEqual(model.tokenize("<|im_start|>x<|im_end|>", true), [259, 0x78 + 3, 260]);
});

test("greedy generation is deterministic", async () => {
  const generate = async (): Promise<Token[]> => {
    const context = await model.createContext({ contextSize: 256, threads: 1 });
    try {
      const out: Token[] = [];
      const prompt = model.tokenize("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n", true);
      for await (const token of context.getSequence().evaluate(prompt, { temperature: 0, yieldEogToken: true })) {
        out.push(token);
        if (out.length === 12) break;
      }
      return out;
    } finally {
      await context.dispose();
    }
  };
  const first = await generate();
  assert.equal(first.length, 12);
  assert.ok(new Set(first).size > 1, "the random model does not just repeat one token");
  assert.deepEqual(await generate(), first);
});

test("the embedding context gives n_embd-long, deterministic vectors", async () => {
  const context = await model.createEmbeddingContext({ contextSize: 128, batchSize: 128, threads: 1 });
  try {
    const a = (await context.getEmbeddingFor("hello")).vector;
    assert.equal(a.length, 64);
    assert.ok(a.every(Number.isFinite));
    assert.deepEqual((await context.getEmbeddingFor("hello")).vector, a);
    assert.notDeepEqual((await context.getEmbeddingFor("world")).vector, a);
  } finally {
    await context.dispose();
  }
});
