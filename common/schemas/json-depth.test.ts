import assert from "node:assert/strict";
import { test } from "node:test";
import { MAX_JSON_DEPTH, tooDeep } from "./json-depth.ts";

/** `{"a":{"a":…{}}}` with `levels` objects (the outer one included), as text. */
function nested(levels: number, key = "a"): string {
  return `${`{"${key}":`.repeat(levels - 1)}{}${"}".repeat(levels - 1)}`;
}

test("a body exactly at the limit passes; one level more is refused", () => {
  assert.equal(tooDeep(JSON.parse(nested(MAX_JSON_DEPTH))), undefined);
  assert.equal(tooDeep(JSON.parse(nested(MAX_JSON_DEPTH + 1)))?.param, "a.a.a.a");
});

test("100,000 levels inside tools[0].function.parameters are found without overflowing, and the field is named", () => {
  const body = `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":${nested(100_000, "p")}}}]}`;
  const found = tooDeep(JSON.parse(body));
  assert.equal(found?.param, "tools[0].function.parameters");
  assert.equal(found?.message, `tools[0].function.parameters: nested too deeply (max ${MAX_JSON_DEPTH} levels of objects and arrays).`);
});

test("arrays count as levels too, and wide documents are fine", () => {
  assert.equal(tooDeep(JSON.parse(`{"x":${"[".repeat(MAX_JSON_DEPTH)}${"]".repeat(MAX_JSON_DEPTH)}}`))?.param, "x[0][0][0]");
  const wide = { messages: Array.from({ length: 10_000 }, (_, i) => ({ role: "user", content: [{ type: "text", text: String(i) }] })) };
  assert.equal(tooDeep(wide), undefined);
  assert.equal(tooDeep("just a string"), undefined);
  assert.equal(tooDeep(null), undefined);
});
