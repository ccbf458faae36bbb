/**
 * A tiny, deterministic llama-architecture GGUF for tests: real llama.cpp inference on random
 * weights, small enough (under 0.5 MB) to generate in a temp dir per test file.
 *
 * Vocabulary (SentencePiece "llama" model, byte fallback), 262 tokens:
 *   0 `<unk>` (UNKNOWN), 1 `<s>` (CONTROL, BOS), 2 `</s>` (CONTROL),
 *   3…258 `<0x00>`…`<0xFF>` (BYTE: any UTF-8 text tokenizes to its bytes),
 *   259 `<|im_start|>`, 260 `<|im_end|>` (CONTROL; EOS is `<|im_end|>`, the ChatML end of turn,
 *   so generation stops where a chat turn ends, as Qwen's GGUFs do),
 *   261 `▁` (NORMAL): SentencePiece writes spaces as U+2581; without this piece a space would fall
 *   back to the three bytes of `▁` and detokenize as `▁`, not as a space.
 * `add_bos_token` and `add_space_prefix` are false: the ChatML template spells out the whole
 * prompt, and text round-trips exactly through tokenize/detokenize.
 *
 * Hyper-parameters: n_embd 64, 2 blocks, 4 heads (and 4 KV heads, head size 16, RoPE over all 16),
 * feed-forward 128, context 1024, RMS-norm epsilon 1e-5. Tensors are F32, uniformly random in
 * ±`scale` from a seeded mulberry32 stream (norm weights 1.0), so one seed gives one model.
 */
import { writeFile } from "node:fs/promises";
import { mulberry32 } from "../engines/llamacpp-sampling.ts";
import { encodeGguf, type GgufTensor, type GgufValue } from "./gguf-writer.ts";

/** Knobs for tests; the defaults give the model described above. */
export interface TinyGgufOptions {
  /** PRNG seed for the weights. Default 1. */
  seed?: number;
  /** Half-width of the uniform weight distribution. Default 0.02. */
  scale?: number;
  /** Half-width for `output.weight` (the logits); larger gives peakier distributions. Default 0.5. */
  outputScale?: number;
  /** `general.name`. Default "gearbox-tiny-llama". */
  name?: string;
  /**
   * Another EOS token id (`<|im_end|>` stays end-of-generation too). Tests use it to make the
   * model end its turn at a token it is known to generate.
   */
  eosTokenId?: number;
  /** `tokenizer.chat_template`; `false` leaves it out. Default ChatML (`CHATML_TEMPLATE`). */
  chatTemplate?: string | false;
  /** Writes `llama.pooling_type` (0 none, 1 mean, 2 CLS, 3 last); absent by default, as in chat models. */
  poolingType?: number;
}

/** The tiny model's shape, for tests that check it. */
export const TINY_MODEL = {
  nEmbd: 64,
  nLayer: 2,
  nHead: 4,
  nFf: 128,
  contextLength: 1024,
  nVocab: 262,
  tokens: { unk: 0, bos: 1, eos: 260, imStart: 259, imEnd: 260, space: 261, firstByte: 3 },
} as const;

/** The ChatML template written to `tokenizer.chat_template`. */
export const CHATML_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** llama.cpp token types. */
const TokenType = { normal: 1, unknown: 2, control: 3, byte: 6 } as const;

function vocabulary(): { tokens: string[]; types: number[]; scores: number[] } {
  const tokens = ["<unk>", "<s>", "</s>"];
  const types: number[] = [TokenType.unknown, TokenType.control, TokenType.control];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`);
    types.push(TokenType.byte);
  }
  tokens.push("<|im_start|>", "<|im_end|>", "\u2581");
  types.push(TokenType.control, TokenType.control, TokenType.normal);
  return { tokens, types, scores: tokens.map(() => 0) };
}

/** Builds the tiny model's GGUF bytes in memory. */
export function buildTinyGguf(options: TinyGgufOptions = {}): Buffer {
  const { seed = 1, scale = 0.02, outputScale = 0.5, name = "gearbox-tiny-llama", eosTokenId, poolingType } = options;
  const chatTemplate = options.chatTemplate ?? CHATML_TEMPLATE;
  const { nEmbd, nLayer, nHead, nFf, contextLength, nVocab, tokens: ids } = TINY_MODEL;
  const vocab = vocabulary();
  if (vocab.tokens.length !== nVocab) throw new Error(`vocabulary has ${vocab.tokens.length} tokens, expected ${nVocab}`);

  const rand = mulberry32(seed);
  const random = (dims: readonly number[], halfWidth = scale): Float32Array => {
    const data = new Float32Array(dims.reduce((a, b) => a * b, 1));
    for (let i = 0; i < data.length; i++) data[i] = (rand() * 2 - 1) * halfWidth;
    return data;
  };
  const ones = (n: number): Float32Array => new Float32Array(n).fill(1);

  const tensors: GgufTensor[] = [{ name: "token_embd.weight", dims: [nEmbd, nVocab], data: random([nEmbd, nVocab]) }];
  for (let i = 0; i < nLayer; i++) {
    const blk = `blk.${i}`;
    tensors.push(
      { name: `${blk}.attn_norm.weight`, dims: [nEmbd], data: ones(nEmbd) },
      { name: `${blk}.attn_q.weight`, dims: [nEmbd, nEmbd], data: random([nEmbd, nEmbd]) },
      { name: `${blk}.attn_k.weight`, dims: [nEmbd, nEmbd], data: random([nEmbd, nEmbd]) },
      { name: `${blk}.attn_v.weight`, dims: [nEmbd, nEmbd], data: random([nEmbd, nEmbd]) },
      { name: `${blk}.attn_output.weight`, dims: [nEmbd, nEmbd], data: random([nEmbd, nEmbd]) },
      { name: `${blk}.ffn_norm.weight`, dims: [nEmbd], data: ones(nEmbd) },
      { name: `${blk}.ffn_gate.weight`, dims: [nEmbd, nFf], data: random([nEmbd, nFf]) },
      { name: `${blk}.ffn_up.weight`, dims: [nEmbd, nFf], data: random([nEmbd, nFf]) },
      { name: `${blk}.ffn_down.weight`, dims: [nFf, nEmbd], data: random([nFf, nEmbd]) },
    );
  }
  tensors.push(
    { name: "output_norm.weight", dims: [nEmbd], data: ones(nEmbd) },
    { name: "output.weight", dims: [nEmbd, nVocab], data: random([nEmbd, nVocab], outputScale) },
  );

  const u32 = (value: number): GgufValue => ({ type: "u32", value });
  const metadata: Array<readonly [string, GgufValue]> = [
    ["general.architecture", { type: "string", value: "llama" }],
    ["general.name", { type: "string", value: name }],
    ["general.alignment", u32(32)],
    ["general.file_type", u32(0)], // ALL_F32
    ["llama.vocab_size", u32(nVocab)],
    ["llama.context_length", u32(contextLength)],
    ["llama.embedding_length", u32(nEmbd)],
    ["llama.block_count", u32(nLayer)],
    ["llama.feed_forward_length", u32(nFf)],
    ["llama.attention.head_count", u32(nHead)],
    ["llama.attention.head_count_kv", u32(nHead)],
    ["llama.attention.layer_norm_rms_epsilon", { type: "f32", value: 1e-5 }],
    ["llama.rope.dimension_count", u32(nEmbd / nHead)],
    ["tokenizer.ggml.model", { type: "string", value: "llama" }],
    ["tokenizer.ggml.tokens", { type: "string[]", value: vocab.tokens }],
    ["tokenizer.ggml.scores", { type: "f32[]", value: vocab.scores }],
    ["tokenizer.ggml.token_type", { type: "i32[]", value: vocab.types }],
    ["tokenizer.ggml.bos_token_id", u32(ids.bos)],
    ["tokenizer.ggml.eos_token_id", u32(eosTokenId ?? ids.eos)],
    ["tokenizer.ggml.unknown_token_id", u32(ids.unk)],
    ["tokenizer.ggml.add_bos_token", { type: "bool", value: false }],
    ["tokenizer.ggml.add_eos_token", { type: "bool", value: false }],
    ["tokenizer.ggml.add_space_prefix", { type: "bool", value: false }],
  ];
  if (chatTemplate !== false) metadata.push(["tokenizer.chat_template", { type: "string", value: chatTemplate }]);
  if (poolingType !== undefined) metadata.push(["llama.pooling_type", u32(poolingType)]);
  return encodeGguf({ metadata, tensors, alignment: 32 });
}

/** Writes the tiny model to `path`; resolves with its size in bytes. */
export async function writeTinyGguf(path: string, options: TinyGgufOptions = {}): Promise<number> {
  const bytes = buildTinyGguf(options);
  await writeFile(path, bytes);
  return bytes.length;
}
