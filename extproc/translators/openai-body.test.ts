/**
 * The upstream body of an OpenAI → OpenAI chat call: the client's bytes unless something must
 * change; usage forced on a stream without options is added to the bytes themselves, every other
 * change is made in a copy of the client's JSON.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { openAIChatBody, withLastMember } from "./openai-openai.ts";

const MEMBER = Buffer.from('"k":1');
const spliced = (text: string) => withLastMember(Buffer.from(text), MEMBER)?.toString("utf8");

test("a member is added last to a JSON object's bytes, whatever whitespace they carry", () => {
  assert.equal(spliced('{"a":[1,{"b":"}"}]}'), '{"a":[1,{"b":"}"}],"k":1}');
  assert.equal(spliced('{\n  "a": 1\n}\n\r\t '), '{\n  "a": 1\n,"k":1}');
  assert.equal(spliced("{}"), '{"k":1}');
  assert.equal(spliced(" { \n } "), ' { \n "k":1}');
  for (const text of ["", "   ", "}", "[1]", '"}"x', "{"]) assert.equal(spliced(text), undefined, JSON.stringify(text));
  for (const text of ['{"a":[1,{"b":"}"}]}', '{\n  "a": 1\n}\n', "{}"])
    assert.deepEqual(JSON.parse(spliced(text) ?? ""), { ...(JSON.parse(text) as object), k: 1 });
});

test("usage forced on a stream: the option added to the client's own bytes, which are otherwise unchanged", () => {
  const text = '{ "messages": [ { "role": "user", "content": "caf\\u00e9 }" } ],\n  "model": "m", "stream": true, "x-ext": {"n": 1.50} }\n';
  const bytes = Buffer.from(text);
  const raw = JSON.parse(text) as Record<string, unknown>;
  const body = openAIChatBody(raw, undefined, true, {}, bytes)?.toString("utf8");
  assert.equal(body, text.slice(0, text.lastIndexOf("}")) + ',"stream_options":{"include_usage":true}}');
  assert.deepEqual(JSON.parse(body ?? ""), { ...raw, stream_options: { include_usage: true } });
});

test("the client's own stream options, a renamed model or a provider's rules: the JSON written out with every field kept", () => {
  const raw = { model: "m", stream: true, stream_options: { include_obfuscation: false }, messages: [{ role: "user", content: "hi", extension: 1 }], seed: 3 };
  const bytes = Buffer.from(JSON.stringify(raw));
  const options = JSON.parse(openAIChatBody(raw, undefined, true, {}, bytes)?.toString("utf8") ?? "") as unknown;
  assert.deepEqual(options, { ...raw, stream_options: { include_obfuscation: false, include_usage: true } });
  const renamed = JSON.parse(openAIChatBody(raw, "up", true, {}, bytes)?.toString("utf8") ?? "") as unknown;
  assert.deepEqual(renamed, { ...raw, model: "up", stream_options: { include_obfuscation: false, include_usage: true } });
  const ruled = JSON.parse(openAIChatBody(raw, undefined, true, { rename: { seed: "random_seed" } }, bytes)?.toString("utf8") ?? "") as unknown;
  const { seed, ...rest } = raw;
  assert.deepEqual(ruled, { ...rest, stream_options: { include_obfuscation: false, include_usage: true }, random_seed: seed });
  assert.equal(openAIChatBody(raw, undefined, false, {}, bytes), undefined, "nothing to change: the client's bytes go");
  assert.equal(openAIChatBody(raw, undefined, false, { drop: ["logit_bias"] }, bytes), undefined, "a rule that matches nothing changes nothing");
});

test("bytes that do not end as an object (never the case for a parsed request): the JSON written out instead", () => {
  const raw = { model: "m", stream: true, messages: [] };
  assert.deepEqual(JSON.parse(openAIChatBody(raw, undefined, true, {}, Buffer.from("garbage"))?.toString("utf8") ?? ""), {
    ...raw,
    stream_options: { include_usage: true },
  });
});
