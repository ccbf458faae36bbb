import assert from "node:assert/strict";
import { test } from "node:test";
import { float32Base64 } from "./openai-embeddings.ts";

test("float32Base64 writes little-endian float32 bytes", () => {
  assert.equal(float32Base64([1, -2]), Buffer.from([0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0]).toString("base64"));
});
