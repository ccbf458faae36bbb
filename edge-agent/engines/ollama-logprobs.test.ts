/**
 * What the emulator's fixtures cannot show: per-token logprobs, `/api/show` and `/api/ps`.
 *
 * No fixture has `logprobs` (Ollama's docs show no response with them), so the stream below is
 * SYNTHESIZED, not recorded or transcribed: its field set is the documented one, `logprobs:
 * [{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}]` on each chunk (`Logprob`
 * and `TokenLogprob` in Ollama's `docs/openapi.yaml` and `api/types.go`), with `done_reason`
 * on the final object; its tokens, values and timings are invented. The same goes for the
 * `/api/show` answer (shape of the docs' "Show model information" example, values invented)
 * and the `/api/ps` entry (fields of `ProcessModelResponse` in `api/types.go`). A tiny
 * `node:http` server serves them, and the official `ollama` client reads them.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { test, type TestContext } from "node:test";
import type { ChatEvent, ModelSpec } from "./engine.ts";
import { createOllamaEngine } from "./ollama.ts";

interface Scripted {
  url: string;
  bodies: Record<string, unknown[]>;
}

const chunk = (content: string, logprobs?: unknown[]) =>
  JSON.stringify({
    model: "llama3.2",
    created_at: "2025-11-12T10:00:00.000000Z",
    message: { role: "assistant", content },
    done: false,
    ...(logprobs && { logprobs }),
  });

const lp = (token: string, logprob: number, top: [string, number][] = []) => ({
  token,
  logprob,
  bytes: [...Buffer.from(token, "utf8")],
  ...(top.length > 0 && { top_logprobs: top.map(([t, l]) => ({ token: t, logprob: l, bytes: [...Buffer.from(t, "utf8")] })) }),
});

/** Synthesized (see the module comment): one token per chunk, a held-back token, a multi-token chunk. */
const STREAM = [
  chunk("The", [
    lp("The", -0.01, [
      ["The", -0.01],
      ["A", -4.7],
    ]),
  ]),
  chunk(" sky", [
    lp(" sky", -0.2, [
      [" sky", -0.2],
      [" ocean", -2.1],
    ]),
  ]),
  chunk("", [lp(" is", -0.05)]),
  chunk(" is blue", [lp(" blue", -0.3)]),
  chunk(" – ", [lp(" –", -1.5), lp(" ", -0.4), lp("\n", -2)]),
  chunk("°"),
  JSON.stringify({
    model: "llama3.2",
    created_at: "2025-11-12T10:00:01.000000Z",
    message: { role: "assistant", content: "" },
    done: true,
    done_reason: "length",
    total_duration: 1,
    load_duration: 1,
    prompt_eval_count: 12,
    prompt_eval_duration: 1,
    eval_count: 7,
    eval_duration: 1,
  }),
].join("\n");

const SHOW = {
  parameters: 'num_keep                       24\nstop                           "<|eot_id|>"',
  details: { parent_model: "", format: "gguf", family: "llama", families: ["llama"], parameter_size: "3.2B", quantization_level: "Q4_K_M" },
  model_info: { "general.architecture": "llama", "llama.context_length": 131072, "llama.embedding_length": 3072 },
  capabilities: ["completion", "tools"],
};

const TAGS = {
  models: [
    {
      name: "llama3.2:latest",
      model: "llama3.2:latest",
      modified_at: "2025-05-04T17:37:44.706015396-07:00",
      size: 2019393189,
      digest: "a80c4f17",
      details: SHOW.details,
    },
  ],
};
const PS = { models: [{ ...TAGS.models[0], expires_at: "2318-01-01T00:00:00Z", size: 3300000000, size_vram: 0, context_length: 8192 }] };

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => resolve(parts.length === 0 ? undefined : JSON.parse(Buffer.concat(parts).toString("utf8"))));
    req.on("error", reject);
  });
}

async function scripted(t: TestContext): Promise<Scripted> {
  const bodies: Record<string, unknown[]> = {};
  const server = createServer((req, res) => {
    const path = req.url ?? "/";
    void readJson(req).then((body) => {
      (bodies[path] ??= []).push(body);
      const json = (value: unknown) => res.writeHead(200, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(value));
      const isLoadRequest = typeof body === "object" && body !== null && "stream" in body && body.stream === false;
      if (path === "/api/tags") return json(TAGS);
      if (path === "/api/show") return json(SHOW);
      if (path === "/api/ps") return json(PS);
      if (path === "/api/chat" && isLoadRequest)
        return json({ model: "llama3.2", created_at: "2025-11-12T10:00:00Z", message: { role: "assistant", content: "" }, done_reason: "load", done: true });
      if (path === "/api/chat") return res.writeHead(200, { "content-type": "application/x-ndjson" }).end(`${STREAM}\n`);
      res.writeHead(404, { "content-type": "text/plain" }).end("404 page not found");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies };
}

const SPEC: ModelSpec = { id: "edge-llama", engine: "ollama", source: "llama3.2" };

test("per-token logprobs: tokens, bytes and alternatives come through; held-back and multi-token chunks are aligned", async (t) => {
  const server = await scripted(t);
  const engine = createOllamaEngine();
  t.after(() => engine.close());
  const model = await engine.load({ ...SPEC, host: server.url });
  const events: ChatEvent[] = [];
  const signal = new AbortController().signal;
  for await (const event of model.chat({
    messages: [{ role: "user", content: "What colour is the sky?" }],
    maxTokens: 7,
    temperature: 0,
    topLogprobs: 2,
    signal,
  }))
    events.push(event);
  const tokens = events.filter((e) => e.type === "token");
  assert.deepEqual(
    tokens.map((e) => [e.text, e.logprob]),
    [
      ["The", -0.01],
      [" sky", -0.2],
      [" is", -0.05],
      [" blue", -0.3],
      [" – ", -1.5 + -0.4 + -2],
      ["°", Number.NaN],
    ],
  );
  assert.deepEqual(tokens[0]?.topLogprobs, [
    { token: "The", logprob: -0.01 },
    { token: "A", logprob: -4.7 },
  ]);
  assert.deepEqual(tokens[4]?.bytes, [32, 0xe2, 0x80, 0x93, 32], "a joint event carries its text's bytes");
  assert.deepEqual(tokens[4]?.topLogprobs, [], "alternatives of three positions do not describe one");
  assert.deepEqual(tokens[5]?.bytes, [0xc2, 0xb0]);
  assert.deepEqual(events.at(-1), { type: "done", finishReason: "length", promptTokens: 12, completionTokens: 7 });
  const chat = server.bodies["/api/chat"]?.at(-1);
  assert.ok(typeof chat === "object" && chat !== null);
  assert.equal((chat as { logprobs?: unknown }).logprobs, true);
  assert.equal((chat as { top_logprobs?: unknown }).top_logprobs, 2);
});

test("info comes from /api/show and /api/ps: capabilities, the allocated context, resident memory", async (t) => {
  const server = await scripted(t);
  const engine = createOllamaEngine();
  t.after(() => engine.close());
  const model = await engine.load({ ...SPEC, host: server.url });
  assert.deepEqual(model.info(), {
    id: "edge-llama",
    engine: "ollama",
    source: "llama3.2",
    contextLength: 8192,
    capabilities: { chat: true, embeddings: false },
    memoryBytes: 3300000000,
  });
  assert.deepEqual(server.bodies["/api/show"], [{ model: "llama3.2" }]);
});

test("a requested context is capped at the trained length from model_info and sent as num_ctx", async (t) => {
  const server = await scripted(t);
  const engine = createOllamaEngine();
  t.after(() => engine.close());
  const model = await engine.load({ ...SPEC, host: server.url, contextLength: 1_000_000 });
  assert.equal(model.info().contextLength, 131072);
  assert.deepEqual((server.bodies["/api/chat"]?.[0] as { options?: unknown }).options, { num_ctx: 131072 });
});
