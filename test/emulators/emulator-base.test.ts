/**
 * The four provider emulators on one base: each answers a plain chat request at its `baseURL`
 * (a Gearbox provider's `base_url`) with the default fixture's bytes, and records it in the one
 * `RecordedRequest` shape; a failing handler answers 500 in the provider's shape; a client that
 * leaves a stream is counted the same way everywhere.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { startAnthropicUpstream } from "./anthropic-upstream.ts";
import { startEmulator, emulatorApi } from "./emulator-base.ts";
import { readFixtureBytes } from "./fixtures.ts";
import { startGeminiUpstream } from "./gemini-upstream.ts";
import { startOllamaUpstream } from "./ollama-upstream.ts";
import { startOpenAIUpstream } from "./openai-upstream.ts";

const RECORD_FIELDS = ["body", "fixture", "headers", "json", "method", "path", "url"];

const CASES = [
  {
    name: "openai",
    start: () => startOpenAIUpstream(),
    path: "/chat/completions",
    headers: {},
    body: { model: "gpt-4.1-nano", messages: [{ role: "user", content: "hi" }] },
    fixture: "vercel-ai/openai/openai-text",
  },
  {
    name: "anthropic",
    start: () => startAnthropicUpstream(),
    path: "/messages",
    headers: { "anthropic-version": "2023-06-01" },
    body: { model: "claude-haiku-4-5", max_tokens: 16, messages: [{ role: "user", content: "hi" }] },
    fixture: "vercel-ai/anthropic/anthropic-text",
  },
  {
    name: "gemini",
    start: () => startGeminiUpstream(),
    path: "/models/gemini-2.5-flash:generateContent",
    headers: {},
    body: { contents: [{ role: "user", parts: [{ text: "hi" }] }] },
    fixture: "vercel-ai/google/google-text",
  },
  {
    name: "ollama",
    start: () => startOllamaUpstream(),
    path: "/api/chat",
    headers: {},
    body: { model: "llama3.2", stream: false, messages: [{ role: "user", content: "hi" }] },
    fixture: "ollama/chat",
  },
] as const;

for (const c of CASES) {
  test(`${c.name}: answers at baseURL with the fixture's bytes and records the request in the shared shape`, async (t) => {
    const emulator = await c.start();
    t.after(() => emulator.close());
    assert.ok(emulator.baseURL.startsWith(emulator.url), "baseURL extends url");
    const res = await fetch(`${emulator.baseURL}${c.path}?trace=1`, {
      method: "POST",
      headers: { "content-type": "application/json", ...c.headers },
      body: JSON.stringify(c.body),
    });
    assert.equal(res.status, 200);
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), readFixtureBytes(c.fixture, "json"));
    assert.equal(emulator.requests.length, 1);
    const record = emulator.requests[0];
    assert.ok(record);
    const own = new Set(["model", "action"]);
    assert.deepEqual(
      Object.keys(record)
        .filter((k) => !own.has(k))
        .sort(),
      RECORD_FIELDS,
    );
    const path = `${new URL(emulator.baseURL).pathname.replace(/\/$/, "")}${c.path}`;
    assert.deepEqual([record.method, record.path, record.url, record.fixture], ["POST", path, `${path}?trace=1`, c.fixture]);
    assert.deepEqual(record.json, c.body);
    assert.equal(emulator.pending, 0);
    assert.equal(emulator.aborted, 0);
  });
}

test("base: a handler that throws before answering gets the emulator's misuse answer; the request is still recorded", async (t) => {
  const running = await startEmulator({
    handle() {
      throw new Error("no fixture for this");
    },
    misuse(res, message) {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(`misuse: ${message}`);
    },
  });
  const emulator = emulatorApi(running, { baseURL: running.url, pending: () => 0 }, {});
  t.after(() => emulator.close());
  const res = await fetch(`${emulator.url}/anything`, { method: "POST", body: "not json" });
  assert.equal(res.status, 500);
  assert.equal(await res.text(), "misuse: no fixture for this");
  assert.equal(emulator.requests.length, 1);
  assert.equal(emulator.requests[0]?.json, undefined);
  assert.equal(emulator.requests[0]?.body.toString("utf8"), "not json");
});
