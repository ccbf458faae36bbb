/** Token bytes: byte-level BPE decoding and the display form of partial UTF-8. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { decodeByteLevel, displayBytes } from "./llamacpp-vocab.ts";

test("byte-level BPE pieces decode to their bytes", () => {
  // GPT-2 maps a space to Ġ (U+0120), a newline to Ċ (U+010A), 0xE2 to â (itself).
  assert.deepEqual([...decodeByteLevel("Ġhello")], [...Buffer.from(" hello")]);
  assert.deepEqual([...decodeByteLevel("ĊĠ")], [0x0a, 0x20]);
  // "✓" is E2 9C 93: â, then the bytes 0x9C and 0x93 mapped above U+0100.
  assert.equal(Buffer.from(decodeByteLevel("âľĵ")).toString("utf8"), "✓");
  assert.deepEqual([...decodeByteLevel("â")], [0xe2]);
});

test("display: whole UTF-8 as text, partial sequences in OpenAI's bytes: form", () => {
  assert.equal(displayBytes(Uint8Array.from(Buffer.from("hé"))), "hé");
  assert.equal(displayBytes(Uint8Array.of(0xe2, 0x9c)), "bytes:\\xe2\\x9c");
  assert.equal(displayBytes(new Uint8Array(0)), "");
});
