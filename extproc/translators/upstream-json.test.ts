/**
 * One code for a broken upstream body: every backend, unary or streamed, chat or embeddings,
 * answers JSON that does not parse with a 502 `upstream_malformed` (Gemini used to say
 * `invalid_upstream_response`), and error bodies that are plain text stay readable.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { GatewayError } from "../../common/errors.ts";
import { anthropicBackend } from "./backends/anthropic.ts";
import { geminiEmbeddingsBackend } from "./backends/gemini-embeddings.ts";
import { geminiBackend } from "./backends/gemini.ts";
import { ollamaEmbeddingsBackend } from "./backends/ollama-embeddings.ts";
import { ollamaBackend } from "./backends/ollama.ts";
import { openaiChatBackend, openaiEmbeddingsBackend } from "./backends/openai.ts";
import type { ChatBackend, EmbeddingsBackend } from "./codec.ts";
import { parseUpstreamJson, readUpstreamJson, UPSTREAM_MALFORMED } from "./upstream-json.ts";

const CTX = { upstreamModel: "m", forceStreamUsage: false };
const NOT_JSON = Buffer.from('{"id": nope');

const CHAT: Record<string, { backend: ChatBackend; badEvent: string }> = {
  openai: { backend: openaiChatBackend, badEvent: "data: {nope}\n\n" },
  anthropic: { backend: anthropicBackend, badEvent: "event: message_start\ndata: {nope}\n\n" },
  gemini: { backend: geminiBackend, badEvent: "data: {nope}\n\n" },
  ollama: { backend: ollamaBackend, badEvent: "{nope}\n" },
};
const EMBEDDINGS: Record<string, EmbeddingsBackend> = { openai: openaiEmbeddingsBackend, gemini: geminiEmbeddingsBackend, ollama: ollamaEmbeddingsBackend };

function assertMalformed(err: unknown, label: string): void {
  assert.ok(err instanceof GatewayError, `${label}: ${String(err)}`);
  assert.deepEqual([err.status, err.type, err.code], [502, "upstream_error", UPSTREAM_MALFORMED], label);
}

for (const [name, { backend, badEvent }] of Object.entries(CHAT)) {
  void test(`${name} chat: a body that is not JSON is a 502 ${UPSTREAM_MALFORMED}`, () => {
    const result = backend.response(NOT_JSON, {}, CTX);
    assert.ok(!result.ok, "accepted a body that is not JSON");
    assertMalformed(result.errors[0], name);
  });

  void test(`${name} chat: a stream event that is not JSON throws a 502 ${UPSTREAM_MALFORMED}`, () => {
    assert.throws(
      () => backend.stream(CTX).push(Buffer.from(badEvent)),
      (err: unknown) => {
        assertMalformed(err, name);
        return true;
      },
    );
  });
}

for (const [name, backend] of Object.entries(EMBEDDINGS)) {
  void test(`${name} embeddings: a body that is not JSON is a 502 ${UPSTREAM_MALFORMED}`, () => {
    const result = backend.response(NOT_JSON, {}, CTX);
    assert.ok(!result.ok, "accepted a body that is not JSON");
    assertMalformed(result.errors[0], name);
  });
}

void test("parseUpstreamJson names the source and what it read, and keeps the parse error as cause", () => {
  assert.deepEqual(parseUpstreamJson(Buffer.from('{"a":[1]}'), "message"), { ok: true, value: { a: [1] } });
  const bad = parseUpstreamJson("{", "stream line", "Ollama");
  assert.ok(!bad.ok);
  assert.equal(bad.errors[0].message, "Ollama sent a malformed stream line (invalid JSON).");
  assert.ok(bad.errors[0].cause instanceof SyntaxError);
  const unnamed = parseUpstreamJson("nope", "message");
  assert.ok(!unnamed.ok);
  assert.equal(unnamed.errors[0].message, "The upstream sent a malformed message (invalid JSON).");
});

void test("readUpstreamJson reads error bodies leniently: JSON parsed, anything else undefined", () => {
  assert.deepEqual(readUpstreamJson(Buffer.from('{"error":"x"}')), { error: "x" });
  assert.equal(readUpstreamJson("null"), null);
  assert.equal(readUpstreamJson(Buffer.from("502 Bad Gateway")), undefined);
  assert.equal(readUpstreamJson(""), undefined);
});
