import assert from "node:assert/strict";
import { test } from "node:test";
import { foreignClientHeaders } from "./client-headers.ts";

const ANTHROPIC_SDK = [
  "content-type",
  "anthropic-version",
  "anthropic-beta",
  "x-stainless-lang",
  "x-stainless-retry-count",
  "user-agent",
  ":path",
  "x-request-id",
];
const OPENAI_SDK = ["content-type", "openai-organization", "openai-project", "x-stainless-os", "x-stainless-package-version", "user-agent"];

test("an Anthropic SDK call translated to OpenAI or Gemini drops anthropic-* and x-stainless-*", () => {
  for (const target of ["openai", "gemini", "ollama"] as const) {
    assert.deepEqual(foreignClientHeaders(ANTHROPIC_SDK, "anthropic", target), [
      "anthropic-version",
      "anthropic-beta",
      "x-stainless-lang",
      "x-stainless-retry-count",
    ]);
  }
});

test("an OpenAI SDK call translated to Anthropic drops openai-* and x-stainless-*", () => {
  assert.deepEqual(foreignClientHeaders(OPENAI_SDK, "openai", "anthropic"), [
    "openai-organization",
    "openai-project",
    "x-stainless-os",
    "x-stainless-package-version",
  ]);
});

test("a same-schema hop keeps every header (Anthropic needs the client's anthropic-version and betas)", () => {
  assert.deepEqual(foreignClientHeaders(ANTHROPIC_SDK, "anthropic", "anthropic"), []);
  assert.deepEqual(foreignClientHeaders(OPENAI_SDK, "openai", "openai"), []);
});
