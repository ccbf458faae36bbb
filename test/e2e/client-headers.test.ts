/** Headers of the client's API (and SDK telemetry) reach only a provider of that API. */
import assert from "node:assert/strict";
import { test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startOpenAIUpstream } from "../emulators/openai-upstream.ts";
import { openAIProviderYaml, startTestGateway, testConfig } from "../support/gateway.ts";

test("an Anthropic SDK call translated to OpenAI sends no anthropic-* or x-stainless-* header; an OpenAI SDK call keeps its own", async () => {
  const upstream = await startOpenAIUpstream({ apiKey: "sk-h" });
  const gateway = await startTestGateway(testConfig(openAIProviderYaml(upstream.baseURL), { TEST_PROVIDER_KEY: "sk-h" }));
  try {
    const anthropic = new Anthropic({ baseURL: gateway.baseURL.replace("/v1", ""), apiKey: "app", maxRetries: 0 });
    await anthropic.messages.create(
      { model: "gpt-4o-mini", max_tokens: 16, messages: [{ role: "user", content: "hi" }] },
      { headers: { "anthropic-beta": "x-1" } },
    );
    const translated = Object.keys(upstream.requests.at(-1)?.headers ?? {});
    assert.deepEqual(
      translated.filter((h) => h.startsWith("anthropic-") || h.startsWith("x-stainless-")),
      [],
    );
    const openai = new OpenAI({ baseURL: gateway.baseURL, apiKey: "app", maxRetries: 0 });
    await openai.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
    const same = Object.keys(upstream.requests.at(-1)?.headers ?? {});
    assert.ok(
      same.some((h) => h.startsWith("x-stainless-")),
      "a same-API hop forwards the SDK's headers as they are",
    );
  } finally {
    await gateway.close();
    await upstream.close();
  }
});
