/**
 * The edge agent serving the generated tiny GGUF model with REAL llama.cpp inference, the
 * official `openai` SDK as the client: completions with logprobs and confidence, streams, bad
 * input, capacity, cancellation, load/unload at run time, and an engine failure mid-stream.
 */
import assert from "node:assert/strict";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { getLlama, LlamaLogLevel, type Llama } from "node-llama-cpp";
import OpenAI from "openai";
import { EngineError, type ChatEvent, type ChatParams, type Engine } from "../../edge-agent/engines/engine.ts";
import { createLlamaCppEngine } from "../../edge-agent/engines/llamacpp.ts";
import { createOllamaEngine } from "../../edge-agent/engines/ollama.ts";
import { createOnnxEngine } from "../../edge-agent/engines/onnx.ts";
import { writeTinyGguf } from "../../edge-agent/model/tiny-gguf.ts";
import { ModelRegistry, type EngineFactories } from "../../edge-agent/registry.ts";
import { startEdgeAgent, type EdgeAgentServer } from "../../edge-agent/server.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";

interface Agent {
  server: EdgeAgentServer;
  registry: ModelRegistry;
  client: OpenAI;
  base: string;
}

let llama: Llama;
let modelFile: string;

/** Wraps the real engine so a chat fails after `afterTokens` tokens, as a crashing engine would. */
function crashingAfter(engine: Engine, afterTokens: number): Engine {
  return {
    kind: engine.kind,
    close: () => engine.close(),
    load: async (spec) => {
      const model = await engine.load(spec);
      return {
        ...model,
        info: () => model.info(),
        countTokens: (m) => model.countTokens(m),
        embed: (t, s) => model.embed(t, s),
        unload: () => model.unload(),
        async *chat(params: ChatParams): AsyncIterable<ChatEvent> {
          let n = 0;
          for await (const event of model.chat(params)) {
            if (event.type === "token" && ++n > afterTokens) throw new EngineError("llama.cpp aborted (simulated native failure)", "engine_crashed");
            yield event;
          }
        },
      };
    },
  };
}

async function startAgent(capacity = { maxConcurrent: 1, maxQueue: 0, retryAfterSeconds: 2 }, wrap: (e: Engine) => Engine = (e) => e): Promise<Agent> {
  const factories: EngineFactories = {
    llamacpp: () => wrap(createLlamaCppEngine({ llama })),
    ollama: () => createOllamaEngine(),
    onnx: () => createOnnxEngine(),
  };
  const registry = new ModelRegistry(factories, capacity);
  await registry.load({ id: "tiny", engine: "llamacpp", source: modelFile, threads: 1, contextLength: 512 });
  const server = await startEdgeAgent({ registry, logger: silentLogger() }, 0, "127.0.0.1");
  const base = `http://127.0.0.1:${server.port}`;
  return { server, registry, base, client: new OpenAI({ baseURL: `${base}/v1`, apiKey: "none", maxRetries: 0 }) };
}

async function stopAgent(agent: Agent): Promise<void> {
  await agent.server.close();
  await agent.registry.close();
}

before(async () => {
  modelFile = path.join(await mkdtemp(path.join(tmpdir(), "edge-e2e-")), "tiny.gguf");
  await writeTinyGguf(modelFile);
  llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
});
after(async () => {
  await llama.dispose();
});

describe("edge agent on the tiny model", () => {
  let agent: Agent;
  before(async () => {
    agent = await startAgent({ maxConcurrent: 1, maxQueue: 0, retryAfterSeconds: 2 });
  });
  after(() => stopAgent(agent));

  const ask = { model: "tiny", messages: [{ role: "user" as const, content: "Say something." }], max_tokens: 12, temperature: 0 };

  test("completion with per-token logprobs and a confidence in header and body", async () => {
    const { data, response } = await agent.client.chat.completions.create({ ...ask, logprobs: true, top_logprobs: 3 }).withResponse();
    const choice = data.choices[0];
    assert.ok(choice);
    assert.equal(typeof choice.message.content, "string");
    assert.equal(data.usage?.completion_tokens, choice.logprobs?.content?.length);
    for (const t of choice.logprobs?.content ?? []) {
      assert.ok(t.logprob <= 0 && Number.isFinite(t.logprob));
      assert.ok(t.top_logprobs.length <= 3);
      for (const alt of t.top_logprobs) {
        // A partial UTF-8 token is spelt `bytes:\xNN`; its bytes are those NN, not the spelling.
        if (alt.token.startsWith("bytes:")) assert.equal(alt.bytes?.length, (alt.token.length - 6) / 4);
        else assert.deepEqual(alt.bytes, [...Buffer.from(alt.token, "utf8")]);
      }
    }
    const header = Number(response.headers.get("x-gearbox-confidence"));
    assert.ok(header > 0 && header <= 1, `confidence ${header}`);
    const body = data as unknown as { gearbox: { confidence: number; mean_logprob: number } };
    assert.ok(Math.abs(body.gearbox.confidence - header) < 1e-5);
    const mean = (choice.logprobs?.content ?? []).reduce((s, t) => s + t.logprob, 0) / (choice.logprobs?.content?.length ?? 1);
    assert.ok(Math.abs(body.gearbox.mean_logprob - mean) < 1e-4, "confidence is exp(mean token logprob)");
  });

  test("greedy stream gives the same text as the completion, confidence in the last chunk", async () => {
    const whole = await agent.client.chat.completions.create(ask);
    const stream = await agent.client.chat.completions.create({ ...ask, stream: true, stream_options: { include_usage: true } });
    let text = "";
    let confidence: number | undefined;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      const extra = chunk as unknown as { gearbox?: { confidence: number } };
      if (extra.gearbox) confidence = extra.gearbox.confidence;
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, whole.choices[0]?.message.content);
    assert.ok(confidence !== undefined && confidence > 0 && confidence <= 1);
    assert.equal(usage?.completion_tokens, whole.usage?.completion_tokens);
  });

  test("bad input: unknown model 404, context overflow 400 naming the limit, tools 400, bad JSON 400", async () => {
    await assert.rejects(agent.client.chat.completions.create({ ...ask, model: "nope" }), (e: unknown) => e instanceof OpenAI.NotFoundError);
    await assert.rejects(agent.client.chat.completions.create({ ...ask, max_tokens: 5000 }), (e: unknown) => {
      assert.ok(e instanceof OpenAI.BadRequestError);
      assert.equal(e.code, "context_length_exceeded");
      assert.match(e.message, /maximum context length is 512 tokens/);
      return true;
    });
    await assert.rejects(
      agent.client.chat.completions.create({ ...ask, tools: [{ type: "function", function: { name: "f" } }] }),
      (e: unknown) => e instanceof OpenAI.BadRequestError && e.code === "tools_unsupported",
    );
    const res = await fetch(`${agent.base}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: "{oops" });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, "invalid_json");
  });

  test("saturated: a second request gets 429 + retry-after at once; a client that leaves frees the slot", async () => {
    const abort = new AbortController();
    const long = await agent.client.chat.completions.create({ ...ask, max_tokens: 400, stream: true }, { signal: abort.signal });
    const iterator = long[Symbol.asyncIterator]();
    await iterator.next();
    const res = await fetch(`${agent.base}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(ask),
    });
    assert.equal(res.status, 429);
    assert.equal(res.headers.get("retry-after"), "2");
    abort.abort();
    const entry = agent.registry.get("tiny");
    for (let i = 0; i < 100 && entry.capacity.inflight > 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(entry.capacity.inflight, 0, "generation stopped when the client left");
    const again = await agent.client.chat.completions.create(ask);
    assert.ok(again.choices[0]);
  });

  test("models load and unload at run time; readyz and metrics follow", async () => {
    const load = await fetch(`${agent.base}/admin/models`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: "tiny-2", engine: "llamacpp", source: modelFile, threads: 1, contextLength: 256 }),
    });
    assert.equal(load.status, 201);
    const models = await agent.client.models.list();
    assert.deepEqual(models.data.map((m) => m.id).sort(), ["tiny", "tiny-2"]);
    assert.ok((await agent.client.chat.completions.create({ ...ask, model: "tiny-2" })).choices[0]);
    assert.equal((await fetch(`${agent.base}/admin/models/tiny-2`, { method: "DELETE" })).status, 200);
    await assert.rejects(agent.client.chat.completions.create({ ...ask, model: "tiny-2" }), (e: unknown) => e instanceof OpenAI.NotFoundError);
    const bad = await fetch(`${agent.base}/admin/models`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: "x", engine: "tpu", source: "y" }),
    });
    assert.equal(bad.status, 400);
    assert.equal((await fetch(`${agent.base}/readyz`)).status, 200);
    const metrics = await (await fetch(`${agent.base}/metrics`)).text();
    assert.match(metrics, /gearbox_edge_generated_tokens_total\{model="tiny"\} \d+/);
    assert.match(metrics, /gearbox_edge_time_to_first_token_seconds_count\{model="tiny"\} \d+/);
  });

  test("embeddings from the model", async () => {
    const res = await agent.client.embeddings.create({ model: "tiny", input: ["a", "b"] });
    assert.equal(res.data.length, 2);
    assert.equal(res.data[0]?.embedding.length, 64);
  });
});

test("an engine failure mid-stream ends that stream with one error event; the agent stays up", async () => {
  const agent = await startAgent({ maxConcurrent: 1, maxQueue: 0, retryAfterSeconds: 1 }, (e) => crashingAfter(e, 3));
  try {
    const stream = await agent.client.chat.completions.create({
      model: "tiny",
      messages: [{ role: "user", content: "x" }],
      max_tokens: 20,
      temperature: 0,
      stream: true,
    });
    let chunks = 0;
    await assert.rejects(
      (async () => {
        for await (const _ of stream) chunks++;
      })(),
      (e: unknown) => e instanceof OpenAI.APIError && /engine failed/.test(e.message),
    );
    assert.ok(chunks >= 3);
    assert.equal((await fetch(`${agent.base}/healthz`)).status, 200);
    // Greedy like the stream above, so it too runs past the failing token.
    await assert.rejects(
      agent.client.chat.completions.create({ model: "tiny", messages: [{ role: "user", content: "x" }], max_tokens: 20, temperature: 0 }),
      (e: unknown) => e instanceof OpenAI.InternalServerError,
    );
    assert.equal(agent.registry.get("tiny").capacity.inflight, 0);
  } finally {
    await stopAgent(agent);
  }
});
