/**
 * Embedders over HTTP. The edge embedder against the REAL edge agent serving the generated tiny
 * GGUF model (llama.cpp, mean-pooled 64-dimension embeddings); the provider embedder against the
 * OpenAI emulator (synthesized vectors, auth checked); bad answers and timeouts from a local
 * stand-in.
 */
import { startTinyEdgeAgent, type TinyEdgeAgent } from "../../../test/support/tiny-edge-agent.ts";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { embeddingVector } from "../../../test/emulators/embeddings.ts";
import { startOpenAIUpstream } from "../../../test/emulators/openai-upstream.ts";
import { testConfig } from "../../../test/support/gateway.ts";
import { EdgeAgents } from "../../edge/agents.ts";
import { EdgeEmbedder } from "./edge-embedder.ts";
import { EmbeddingError, type EmbeddingErrorCode } from "./embedder-http.ts";
import { ProviderEmbedder } from "./provider-embedder.ts";

const agents = (address: string, model = "tiny") => new EdgeAgents(testConfig(`edge:\n  agents: [{ address: '${address}', models: [${model}] }]\n`).edge);

async function rejectsWith(promise: Promise<unknown>, code: EmbeddingErrorCode): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof EmbeddingError, String(err));
    assert.equal(err.code, code, err.message);
    return true;
  });
}

describe("edge embedder on the real edge agent", () => {
  let agent: TinyEdgeAgent;
  before(async () => {
    agent = await startTinyEdgeAgent({ contextLength: 512 });
  });
  after(async () => {
    await agent.close();
  });

  test("unit-length vectors, one per text, in order, deterministic; the length is learnt", async () => {
    const embedder = new EdgeEmbedder({ agents: agents(`127.0.0.1:${agent.port}`), model: "tiny", timeoutMs: 10_000 });
    assert.equal(embedder.name, "edge:tiny");
    const [a, b, c] = await embedder.embed(["the sky is blue", "天空是蓝色的", "the sky is blue"]);
    assert.equal(embedder.dimensions, 64);
    for (const v of [a, b]) assert.ok(v && v.length === 64 && Math.abs(Math.hypot(...v) - 1) < 1e-5);
    assert.deepEqual(c, a, "same text, same vector");
    assert.notDeepEqual(a, b);
  });

  test("a model no agent serves, and an agent that does not know the model, reject", async () => {
    await rejectsWith(new EdgeEmbedder({ agents: agents(`127.0.0.1:${agent.port}`), model: "minilm", timeoutMs: 1000 }).embed(["x"]), "embedder_no_agent");
    const wrong = agents(`127.0.0.1:${agent.port}`, "minilm");
    await rejectsWith(new EdgeEmbedder({ agents: wrong, model: "minilm", timeoutMs: 5000 }).embed(["x"]), "embedder_status");
  });
});

/** A stand-in agent answering `body` (or hanging). */
async function standIn(answer: { status?: number; body?: unknown; hang?: boolean }) {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (answer.hang) return;
      res.writeHead(answer.status ?? 200, { "content-type": "application/json" });
      res.end(typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

test("bad answers and timeouts reject with a typed error naming the problem", async () => {
  const cases: [Parameters<typeof standIn>[0], EmbeddingErrorCode][] = [
    [{ status: 503, body: { error: { message: "busy" } } }, "embedder_status"],
    [{ body: "not json" }, "embedder_bad_response"],
    [{ body: { data: [] } }, "embedder_bad_response"],
    [
      {
        body: {
          data: [
            { index: 0, embedding: [1, "x"] },
            { index: 1, embedding: [1, 0] },
          ],
        },
      },
      "embedder_bad_response",
    ],
    [
      {
        body: {
          data: [
            { index: 0, embedding: [1, 0, 0] },
            { index: 1, embedding: [1, 0] },
          ],
        },
      },
      "embedder_bad_response",
    ],
    [
      {
        body: {
          data: [
            { index: 0, embedding: [0, 0] },
            { index: 1, embedding: [1, 0] },
          ],
        },
      },
      "embedder_bad_response",
    ],
    [
      {
        body: {
          data: [
            { index: 1, embedding: [1, 0] },
            { index: 1, embedding: [1, 0] },
          ],
        },
      },
      "embedder_bad_response",
    ],
    [{ hang: true }, "embedder_timeout"],
  ];
  for (const [answer, code] of cases) {
    const s = await standIn(answer);
    try {
      await rejectsWith(new EdgeEmbedder({ agents: agents(s.address), model: "tiny", timeoutMs: 150 }).embed(["a", "b"]), code);
    } finally {
      await s.close();
    }
  }
  await rejectsWith(new EdgeEmbedder({ agents: agents("127.0.0.1:1"), model: "tiny", timeoutMs: 1000 }).embed(["a"]), "embedder_unreachable");
});

test("vectors out of order are put back in order and normalised", async () => {
  const s = await standIn({
    body: {
      data: [
        { index: 1, embedding: [0, 2] },
        { index: 0, embedding: [3, 4] },
      ],
    },
  });
  try {
    const [a, b] = await new EdgeEmbedder({ agents: agents(s.address), model: "tiny", timeoutMs: 1000 }).embed(["a", "b"]);
    assert.deepEqual(Array.from(a ?? []), [Math.fround(0.6), Math.fround(0.8)]);
    assert.deepEqual(Array.from(b ?? []), [0, 1]);
  } finally {
    await s.close();
  }
});

test("provider embedder: the provider's base URL, credential and model alias", async () => {
  const upstream = await startOpenAIUpstream({ apiKey: "sk-emb" });
  try {
    const config = testConfig(
      `providers:\n  - { name: oai, kind: openai, base_url: '${upstream.baseURL}', api_key_env: K, aliases: { small: text-embedding-3-small } }\n`,
      { K: "sk-emb" },
    );
    const provider = config.providers[0];
    assert.ok(provider);
    const embedder = new ProviderEmbedder({ provider, model: "small", timeoutMs: 2000 });
    assert.equal(embedder.name, "provider:oai:small");
    const [v] = await embedder.embed(["the sky is blue"]);
    const expected = embeddingVector("text-embedding-3-small", "the sky is blue", 1536);
    assert.equal(v?.length, 1536);
    v?.forEach((x, i) => assert.ok(Math.abs(x - (expected[i] ?? 0)) < 1e-6));
    const seen = upstream.requests.at(-1);
    assert.equal(seen?.path, "/v1/embeddings");
    assert.equal(seen?.headers.authorization, "Bearer sk-emb");
    assert.equal((seen?.json as { model: string }).model, "text-embedding-3-small");
    const badKey = testConfig(`providers:\n  - { name: oai, kind: openai, base_url: '${upstream.baseURL}', api_key_env: K }\n`, { K: "sk-wrong" }).providers[0];
    assert.ok(badKey);
    await rejectsWith(new ProviderEmbedder({ provider: badKey, model: "text-embedding-3-small", timeoutMs: 2000 }).embed(["x"]), "embedder_status");
  } finally {
    await upstream.close();
  }
});
