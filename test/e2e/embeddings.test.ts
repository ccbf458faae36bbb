/**
 * `/v1/embeddings` from the OpenAI SDK (which asks for base64 by default) on every embeddings
 * backend, through the front door: the SDK must decode exactly the vectors the upstream sent.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import OpenAI from "openai";
import { embeddingVector } from "../emulators/embeddings.ts";
import { startGeminiUpstream } from "../emulators/gemini-upstream.ts";
import { startOllamaUpstream } from "../emulators/ollama-upstream.ts";
import { startOpenAIUpstream } from "../emulators/openai-upstream.ts";
import { startTestGateway, testConfig } from "../support/gateway.ts";

const KEY = "sk-embeddings-key";

const BACKENDS = [
  {
    kind: "openai",
    model: "text-embedding-3-small",
    start: async () => {
      const u = await startOpenAIUpstream({ apiKey: KEY });
      return { base: u.baseURL, close: () => u.close() };
    },
  },
  {
    kind: "gemini",
    model: "text-embedding-004",
    start: async () => {
      const u = await startGeminiUpstream({ apiKey: KEY });
      return { base: u.baseURL, close: () => u.close() };
    },
  },
  {
    kind: "ollama",
    model: "all-minilm",
    start: async () => {
      const u = await startOllamaUpstream();
      return { base: u.url, close: () => u.close() };
    },
  },
] as const;

for (const backend of BACKENDS) {
  test(`${backend.kind}: SDK default (base64) and float both decode to the upstream's vectors`, async () => {
    const up = await backend.start();
    const gateway = await startTestGateway(
      testConfig(`providers:\n  - { name: e, kind: ${backend.kind}, base_url: '${up.base}', api_key_env: K }\n`, { K: KEY }),
    );
    try {
      const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: "client", maxRetries: 0 });
      const inputs = ["the sky is blue", "天空是蓝色的"];
      const viaBase64 = await client.embeddings.create({ model: backend.model, input: inputs, dimensions: 16 });
      const viaFloat = await client.embeddings.create({ model: backend.model, input: inputs, dimensions: 16, encoding_format: "float" });
      assert.equal(viaBase64.data.length, 2);
      viaBase64.data.forEach((d, i) => {
        const expected = Array.from(embeddingVector(backend.model, inputs[i] ?? "", 16));
        assert.deepEqual(d.embedding, expected, "base64 float32 decodes to the exact float32 values");
        assert.deepEqual(viaFloat.data[i]?.embedding.map(Math.fround), expected);
      });
    } finally {
      await gateway.close();
      await up.close();
    }
  });
}
