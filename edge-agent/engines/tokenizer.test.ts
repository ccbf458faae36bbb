/**
 * The ONNX engine's tokenizers: BERT-style WordPiece and the byte-level fallback, and the
 * config check that names bad fields. Expected ids are worked out by hand from the vocab below.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { basicTokens, createTokenizer, parseTokenizerConfig, wordPieces, type TokenizerConfig } from "./tokenizer.ts";

/** A toy vocabulary (ids chosen by hand). */
const TOY_VOCAB: Readonly<Record<string, number>> = {
  "[PAD]": 0,
  "[UNK]": 1,
  "[CLS]": 2,
  "[SEP]": 3,
  the: 4,
  sky: 5,
  is: 6,
  blue: 7,
  grass: 8,
  green: 9,
  "##s": 10,
  "!": 11,
  un: 12,
  "##believ": 13,
  "##able": 14,
  cafe: 15,
  中: 16,
};

function config(json: unknown): TokenizerConfig {
  const parsed = parseTokenizerConfig(json);
  assert.ok(parsed.ok, parsed.ok ? "" : parsed.errors.join("; "));
  return parsed.value;
}

const wordpiece = () => createTokenizer(config({ type: "wordpiece", vocab: TOY_VOCAB, max_length: 16 }));

test("wordpiece: lower-cases, splits punctuation, wraps in cls/sep", () => {
  assert.deepEqual(wordpiece().encode("The sky is BLUE!"), [2, 4, 5, 6, 7, 11, 3]);
});

test("wordpiece: longest match first with ## continuations; an unmatched word is one unk", () => {
  assert.deepEqual(wordpiece().encode("unbelievable skys"), [2, 12, 13, 14, 5, 10, 3]);
  assert.deepEqual(wordpiece().encode("unbelievablex grass"), [2, 1, 8, 3]);
});

test("wordpiece: accents stripped when lower-casing, CJK split, control characters dropped", () => {
  assert.deepEqual(wordpiece().encode("Café\u0007中the"), [2, 15, 16, 4, 3]);
  assert.deepEqual(basicTokens("Héllo,\tWORLD\u200b!", true), ["hello", ",", "world", "!"]);
  assert.deepEqual(basicTokens("Héllo", false), ["Héllo"]);
});

test("wordpiece: the pieces are cut to max_length, cls and sep kept", () => {
  const tok = createTokenizer(config({ type: "wordpiece", vocab: TOY_VOCAB, max_length: 5 }));
  assert.deepEqual(tok.encode("the sky is blue"), [2, 4, 5, 6, 3]);
  assert.equal(tok.maxLength, 5);
  assert.equal(tok.padId, 0);
  assert.deepEqual(tok.encode(""), [2, 3]);
});

test("wordpiece: words over 100 characters are unk", () => {
  assert.equal(wordPieces("s".repeat(101), new Map([["s", 1]])), undefined);
  assert.deepEqual(
    wordPieces(
      "ss",
      new Map([
        ["s", 1],
        ["##s", 2],
      ]),
    ),
    [1, 2],
  );
});

test("bytes: UTF-8 bytes plus offset, optional bos/eos kept when cutting", () => {
  const plain = createTokenizer(config({ type: "bytes" }));
  assert.deepEqual(plain.encode("hé"), [104 + 3, 0xc3 + 3, 0xa9 + 3]);
  assert.equal(plain.maxLength, 512);
  const framed = createTokenizer(config({ type: "bytes", offset: 10, pad_id: 5, bos_id: 1, eos_id: 2, max_length: 4 }));
  assert.deepEqual(framed.encode("abc"), [1, 97 + 10, 98 + 10, 2]);
  assert.equal(framed.padId, 5);
});

test("bad configs fail with every bad field named", () => {
  const result = parseTokenizerConfig({ type: "wordpiece", vocab: { "[CLS]": 0, a: -1 }, lowercase: "yes", max_length: 2 });
  assert.ok(!result.ok);
  assert.deepEqual(result.errors, [
    'vocab["a"]: expected a non-negative integer id, got -1',
    'unk: the token "[UNK]" is not in vocab',
    'sep: the token "[SEP]" is not in vocab',
    'pad: the token "[PAD]" is not in vocab',
    'lowercase: expected true or false, got "yes"',
    "max_length: expected an integer ≥ 3 (room for cls and sep), got 2",
  ]);
  assert.deepEqual(parseTokenizerConfig({ type: "bpe" }), { ok: false, errors: ['type: expected "wordpiece" or "bytes", got "bpe"'] });
  assert.deepEqual(parseTokenizerConfig([]), { ok: false, errors: ["expected a JSON object"] });
  const bytes = parseTokenizerConfig({ type: "bytes", eos_id: 1, max_length: 1, offset: 1.5 });
  assert.ok(!bytes.ok);
  assert.deepEqual(bytes.errors, ["offset: expected a non-negative integer, got 1.5", "max_length: expected an integer > 1 (room for the frame), got 1"]);
});
