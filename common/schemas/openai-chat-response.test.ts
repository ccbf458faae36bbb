import assert from "node:assert/strict";
import { test } from "node:test";
import { loadChunkFixture, loadJsonFixture } from "../../test/emulators/fixtures.ts";
import { parseOpenAIChatChunk, parseOpenAIChatResponse, toOpenAIChatChunk, toOpenAIChatResponse } from "./openai-chat-response.ts";

const RESPONSES = [
  "vercel-ai/openai/openai-text",
  "vercel-ai/xai/xai-tool-call",
  "vercel-ai/deepseek/deepseek-reasoning",
  "vercel-ai/groq/groq-tool-call",
  "vercel-ai/mistral/mistral-tool-call",
];

for (const name of RESPONSES) {
  test(`recorded response ${name}: canonical → OpenAI keeps content, tool calls, finish reason and usage`, () => {
    const recorded = loadJsonFixture(name) as {
      choices: { message: { content: string | null; tool_calls?: { id: string; function: { name: string; arguments: string } }[] }; finish_reason: string }[];
      usage: { prompt_tokens: number; completion_tokens: number };
    };
    const parsed = parseOpenAIChatResponse(recorded);
    assert.ok(parsed.ok);
    const out = toOpenAIChatResponse(parsed.value) as typeof recorded;
    const [want, got] = [recorded.choices[0], out.choices[0]];
    assert.equal(got?.message.content ?? null, want?.message.content ?? null);
    assert.equal(got?.finish_reason, want?.finish_reason);
    assert.deepEqual(
      got?.message.tool_calls?.map((c) => [c.id, c.function.name, c.function.arguments]),
      want?.message.tool_calls?.map((c) => [c.id, c.function.name, c.function.arguments]),
    );
    assert.equal(out.usage.prompt_tokens, recorded.usage.prompt_tokens);
    assert.equal(out.usage.completion_tokens, recorded.usage.completion_tokens);
  });
}

test("recorded tool-call stream: chunks → canonical → OpenAI assemble the same arguments", () => {
  const chunks = loadChunkFixture("vercel-ai/deepseek/deepseek-tool-call");
  const args = (list: unknown[]) =>
    list
      .map(
        (c) =>
          (c as { choices?: { delta?: { tool_calls?: { function?: { arguments?: string } }[] } }[] }).choices?.[0]?.delta?.tool_calls?.[0]?.function
            ?.arguments ?? "",
      )
      .join("");
  const roundTripped = chunks.map((c) => {
    const parsed = parseOpenAIChatChunk(c);
    assert.ok(parsed.ok);
    return toOpenAIChatChunk(parsed.value);
  });
  assert.equal(args(roundTripped), args(chunks));
  assert.ok(args(chunks).length > 0);
});

test("a body without choices is not a chat completion", () => {
  assert.equal(parseOpenAIChatResponse({ error: { message: "x" } }).ok, false);
  assert.equal(parseOpenAIChatChunk("data").ok, false);
});
