import assert from "node:assert/strict";
import { test } from "node:test";
import { fewBrackets, MAX_JSON_DEPTH, tooDeep } from "./json-depth.ts";
import { decodeJsonBody } from "./json-body.ts";

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

test("fewBrackets: at most the limit's opening brackets skips the walk; any more (strings included) walks", () => {
  assert.equal(fewBrackets(Buffer.from(nested(MAX_JSON_DEPTH))), true);
  assert.equal(fewBrackets(Buffer.from(nested(MAX_JSON_DEPTH + 1))), false);
  assert.equal(fewBrackets(Buffer.from(`{"x":${"[".repeat(MAX_JSON_DEPTH)}${"]".repeat(MAX_JSON_DEPTH)}}`)), false);
  assert.equal(fewBrackets(Buffer.from(`{"s":"${"{[".repeat(40)}"}`)), false);
  assert.equal(fewBrackets(Buffer.from('{"model":"m","messages":[{"role":"user","content":"x"}]}')), true);
});

test("decodeJsonBody refuses a body nested past the limit, whether or not its brackets are few", () => {
  const deep = decodeJsonBody(Buffer.from(nested(MAX_JSON_DEPTH + 1)));
  assert.equal(deep.ok ? undefined : deep.errors[0]?.code, "json_too_deep");
  assert.equal(decodeJsonBody(Buffer.from(nested(MAX_JSON_DEPTH))).ok, true);
});
