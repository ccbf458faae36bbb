/**
 * The raw bytes of each token, for OpenAI's `logprobs.content[].bytes` and for streaming text
 * that never splits a UTF-8 character. node-llama-cpp's `detokenize` returns a JS string, so a
 * token holding part of a character (an SPM byte token such as `<0xE2>`, or a byte-level BPE
 * piece) comes back as U+FFFD. The bytes are rebuilt here from the GGUF vocabulary the way
 * llama.cpp's `token_to_piece` does (without special tokens):
 *   - control, unknown and unused tokens render as nothing;
 *   - byte tokens `<0xNN>` are the byte NN;
 *   - user-defined tokens are their text;
 *   - normal tokens: SentencePiece-style vocabularies (spm, ugm, wpm) write a space as `▁`
 *     (U+2581); byte-level BPE (gpt2) maps each character back to one byte (GPT-2's
 *     `bytes_to_unicode`); other vocabularies fall back to `detokenize`.
 */
import { LlamaVocabularyType, type LlamaModel, type Token } from "node-llama-cpp";

/** Bytes and display strings of a model's tokens, computed once per token. */
export interface TokenRenderer {
  /** What the token adds to the output, as raw bytes (empty for control tokens). */
  bytes(token: Token): Uint8Array;
  /**
   * A readable form for `top_logprobs`: the text when the bytes are whole UTF-8, OpenAI's
   * `bytes:\xe2\x80` form when they are not, the token's name (`<|im_end|>`) for control tokens.
   */
  display(token: Token): string;
}

const EMPTY = new Uint8Array(0);
const BYTE_TOKEN = /^<0x([0-9A-Fa-f]{2})>$/;

/** GPT-2's `bytes_to_unicode`, inverted: code point → byte. */
function gpt2UnicodeToByte(): Map<number, number> {
  const bytes: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) bytes.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bytes.push(b);
  for (let b = 0xae; b <= 0xff; b++) bytes.push(b);
  const map = new Map<number, number>(bytes.map((b) => [b, b]));
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!map.has(b)) map.set(256 + n++, b);
  }
  return map;
}

let gpt2Map: Map<number, number> | undefined;

/** Decodes a byte-level BPE piece to its bytes (characters outside the map pass as UTF-8). */
export function decodeByteLevel(piece: string): Uint8Array {
  gpt2Map ??= gpt2UnicodeToByte();
  const out: number[] = [];
  for (const ch of piece) {
    const cp = ch.codePointAt(0) ?? 0;
    const byte = gpt2Map.get(cp);
    if (byte !== undefined) out.push(byte);
    else out.push(...Buffer.from(ch, "utf8"));
  }
  return Uint8Array.from(out);
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** `bytes` as text when it is whole UTF-8, else OpenAI's `bytes:\xNN…` form. */
export function displayBytes(bytes: Uint8Array): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return "bytes:" + Array.from(bytes, (b) => "\\x" + b.toString(16).padStart(2, "0")).join("");
  }
}

/** Builds the renderer for `model` from its GGUF vocabulary and token attributes. */
export function createTokenRenderer(model: LlamaModel): TokenRenderer {
  const pieces: readonly string[] | undefined = model.fileInfo.metadata.tokenizer?.ggml?.tokens;
  const type = model.vocabularyType;
  const cache = new Map<Token, Uint8Array>();
  const utf8 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, "utf8"));

  const compute = (token: Token): Uint8Array => {
    const attrs = model.getTokenAttributes(token);
    if (attrs.control || attrs.unknown || attrs.unused || attrs.undefined) return EMPTY;
    const piece = pieces?.[token];
    if (piece === undefined) return utf8(model.detokenize([token]));
    if (attrs.byte) {
      const hex = BYTE_TOKEN.exec(piece)?.[1];
      return hex === undefined ? utf8(model.detokenize([token])) : Uint8Array.of(parseInt(hex, 16));
    }
    if (attrs.userDefined) return utf8(piece);
    switch (type) {
      case LlamaVocabularyType.spm:
      case LlamaVocabularyType.ugm:
      case LlamaVocabularyType.wpm:
        return utf8(piece.replaceAll("\u2581", " "));
      case LlamaVocabularyType.bpe:
        return decodeByteLevel(piece);
      case LlamaVocabularyType.rwkv:
      case LlamaVocabularyType.plamo2:
      case LlamaVocabularyType.none:
        return utf8(model.detokenize([token]));
      default: {
        const never: never = type;
        throw new Error(`unknown vocabulary type ${String(never)}`);
      }
    }
  };

  const bytes = (token: Token): Uint8Array => {
    let b = cache.get(token);
    if (b === undefined) {
      b = compute(token);
      cache.set(token, b);
    }
    return b;
  };

  return {
    bytes,
    display(token) {
      const b = bytes(token);
      if (b.length === 0 && model.isSpecialToken(token)) return model.detokenize([token], true);
      return displayBytes(b);
    },
  };
}
