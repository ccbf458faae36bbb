/**
 * The semantic cache end to end: the gateway (front door, and Envoy harness + ext_proc) with
 * governance (two tenants), the semantic cache on (exact cache off, so every hit is semantic),
 * the built-in embedder, an OpenAI emulator upstream and the OpenAI SDK as the client.
 *
 * A paraphrase of a cached question is answered from the cache without an upstream call (JSON,
 * and as an SSE stream the SDK parses); another tenant, model, system prompt, tools, numbers or
 * question type go upstream; with verification on, the edge model's "no" keeps the answer from
 * being reused; with the semantic store on a Redis that dies, requests still succeed (misses).
 */
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import { createSemanticCache } from "../../extproc/cache/semantic/create-semantic-cache.ts";
import type { SemanticCache } from "../../extproc/cache/semantic/semantic-cache.ts";
import { RedisChild } from "../support/redis-child.ts";
import type { GatewayConfig } from "../../extproc/config/load.ts";
import { createAuthDeps } from "../../extproc/governance/auth.ts";
import { Governor } from "../../extproc/governance/governor.ts";
import { generateKey } from "../../extproc/governance/keys.ts";
import type { ProcessorDeps } from "../../extproc/processor/processor.ts";
import { MemoryLimiter } from "../../extproc/store/memory-limiter.ts";
import { MemoryTenantStore } from "../../extproc/store/memory-tenant-store.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import { startOpenAIUpstream, type OpenAIUpstream } from "../emulators/openai-upstream.ts";
import { startGatewayPair, testConfig, type GatewayPair } from "../support/gateway.ts";
import { Runtime } from "../../extproc/runtime/runtime.ts";

const KEY = "sk-cloud-key";

interface Gateway {
  pair: GatewayPair;
  semantic: SemanticCache;
  keys: Record<string, string>;
  close(): Promise<void>;
}

/** A gateway over `extraYaml` (the semantic cache's settings), with tenants `shop` and `other`. */
async function startGateway(cloud: OpenAIUpstream, extraYaml: string, redisUrl?: string): Promise<Gateway> {
  const config: GatewayConfig = testConfig(
    `providers:\n  - { name: openai, kind: openai, base_url: '${cloud.baseURL}', api_key_env: K }\ntenants:\n  - { id: shop }\n  - { id: other }\n${extraYaml}`,
    { K: KEY },
  );
  const store = new MemoryTenantStore();
  const keys: Record<string, string> = {};
  for (const tenant of ["shop", "other"]) {
    const { key, record } = generateKey({ role: "call", tenant, name: `${tenant} app`, createdBy: "test" });
    await store.putKey(record);
    keys[tenant] = key;
  }
  const governor = new Governor({ store: new MemoryLimiter(), runaway: config.runaway, logger: silentLogger() });
  const runtime = new Runtime(config);
  const made = createSemanticCache(config, { logger: silentLogger(), edges: runtime.current().edgeAgents, ...(redisUrl !== undefined && { redisUrl }) });
  if (!made.ok) throw new Error(made.errors.join("\n"));
  const semantic = made.value.cache;
  if (!semantic) throw new Error("the semantic cache is off");
  const deps: ProcessorDeps = { runtime, logger: silentLogger(), governance: { auth: createAuthDeps(config, store, {}), governor }, semanticCache: semantic };
  const pair = await startGatewayPair(deps, cloud.url);
  return {
    pair,
    semantic,
    keys,
    close: async () => {
      await pair.close();
      governor.close();
      await made.value.close();
    },
  };
}

const SEMANTIC = "cache:\n  semantic:\n    enable: true\n    threshold: 0.7\n";
const question = (text: string, extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}) => ({
  model: "gpt-4.1-nano",
  messages: [
    { role: "system" as const, content: "You are terse." },
    { role: "user" as const, content: text },
  ],
  temperature: 0,
  ...extra,
});

/** Polls until the fire-and-forget store has the entry (the insert goes through the index worker). */
async function stored(semantic: SemanticCache, count: number): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (semantic.stats.stored < count) {
    if (Date.now() > deadline) throw new Error(`the semantic cache stored ${semantic.stats.stored} answers, expected ${count}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("semantic cache, built-in embedder, memory store", () => {
  let cloud: OpenAIUpstream;
  let gateway: Gateway;
  before(async () => {
    cloud = await startOpenAIUpstream({ apiKey: KEY });
    gateway = await startGateway(cloud, SEMANTIC);
  });
  after(async () => {
    await gateway.close();
    await cloud.close();
  });

  for (const transport of ["front door", "envoy + ext_proc"] as const) {
    const client = (tenant = "shop") =>
      new OpenAI({
        baseURL: transport === "front door" ? `http://127.0.0.1:${gateway.pair.frontDoor.port}/v1` : `${gateway.pair.envoy.url}/v1`,
        apiKey: gateway.keys[tenant] ?? "",
        maxRetries: 0,
      });
    // Each transport asks its own questions (one cache serves both).
    const q =
      transport === "front door"
        ? {
            asked: "How do I reverse a list in Python?",
            paraphrase: "How can I reverse a list in Python?",
            why: "Why do I reverse a list in Python?",
            money: ["Convert 25 USD to EUR", "Convert 35 USD to EUR"],
          }
        : {
            asked: "How do I read a CSV file in Go?",
            paraphrase: "How can I read a CSV file in Go?",
            why: "Why do I read a CSV file in Go?",
            money: ["How much is 40 GBP in Japanese yen today?", "How much is 45 GBP in Japanese yen today?"],
          };

    test(`${transport}: a paraphrase is answered from the cache; scope, numbers and question type keep others out`, async () => {
      const upstream = () => cloud.requests.length;
      const storedBefore = gateway.semantic.stats.stored;
      const first = await client().chat.completions.create(question(q.asked)).withResponse();
      assert.equal(first.response.headers.get("x-gearbox-route"), "cloud");
      await stored(gateway.semantic, storedBefore + 1);

      const seen = upstream();
      const again = await client().chat.completions.create(question(q.paraphrase)).withResponse();
      assert.equal(again.response.headers.get("x-gearbox-route"), "cache");
      assert.equal(again.response.headers.get("x-gearbox-cache"), "semantic-hit");
      const similarity = Number(again.response.headers.get("x-gearbox-cache-similarity"));
      assert.ok(similarity >= 0.7 && similarity < 1, `similarity ${similarity}`);
      assert.equal(again.data.choices[0]?.message.content, first.data.choices[0]?.message.content);
      assert.equal(upstream(), seen, "no upstream call for a hit");

      // Streamed: the cached completion replayed as SSE, which the SDK reassembles to the same text.
      const stream = await client().chat.completions.create({ ...question(q.paraphrase), stream: true });
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
      assert.equal(text, first.data.choices[0]?.message.content);
      assert.equal(upstream(), seen, "no upstream call for a streamed hit");

      const misses: [string, () => Promise<unknown>][] = [
        ["another tenant", () => client("other").chat.completions.create(question(q.paraphrase))],
        ["another model", () => client().chat.completions.create(question(q.paraphrase, { model: "gpt-4.1-mini" }))],
        [
          "another system prompt",
          () =>
            client().chat.completions.create({
              ...question(q.paraphrase),
              messages: [
                { role: "system", content: "Answer in French." },
                { role: "user", content: q.paraphrase },
              ],
            }),
        ],
        [
          "tools",
          () =>
            client().chat.completions.create(
              question(q.paraphrase, { tools: [{ type: "function", function: { name: "run_python", parameters: { type: "object", properties: {} } } }] }),
            ),
        ],
        ["another question type (why, not how)", () => client().chat.completions.create(question(q.why))],
      ];
      for (const [what, ask] of misses) {
        const before = upstream();
        await ask();
        assert.equal(upstream(), before + 1, `${what}: goes upstream`);
      }
    });

    test(`${transport}: the entity guard keeps a question with other numbers from a cached answer`, async () => {
      const storedBefore = gateway.semantic.stats.stored;
      await client().chat.completions.create(question(q.money[0] ?? ""));
      await stored(gateway.semantic, storedBefore + 1);
      const rejected = gateway.semantic.stats.guard_rejected;
      const before = cloud.requests.length;
      const other = await client()
        .chat.completions.create(question(q.money[1] ?? ""))
        .withResponse();
      assert.equal(other.response.headers.get("x-gearbox-route"), "cloud");
      assert.equal(cloud.requests.length, before + 1);
      assert.equal(gateway.semantic.stats.guard_rejected, rejected + 1, "rejected by the guard, not for want of similarity");
    });
  }
});

/** A stand-in edge agent for verification: answers `yes` or `no` (a real small model's judgement cannot be had here). */
async function judge(): Promise<{ address: string; answer: { content: string }; asked: number; close(): Promise<void> }> {
  const state = { address: "", answer: { content: "no" }, asked: 0, close: () => Promise.resolve() };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      state.asked++;
      const content = state.answer.content;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: "v",
          object: "chat.completion",
          created: 1,
          model: "judge",
          choices: [
            {
              index: 0,
              message: { role: "assistant", content },
              logprobs: {
                content: [{ token: content, logprob: Math.log(0.95), bytes: [], top_logprobs: [{ token: content, logprob: Math.log(0.95), bytes: [] }] }],
                refusal: null,
              },
              finish_reason: "length",
            },
          ],
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  state.address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return state;
}

describe("semantic cache with edge verification", () => {
  let cloud: OpenAIUpstream;
  let gateway: Gateway;
  let verifier: Awaited<ReturnType<typeof judge>>;
  before(async () => {
    cloud = await startOpenAIUpstream({ apiKey: KEY });
    verifier = await judge();
    gateway = await startGateway(
      cloud,
      `${SEMANTIC}    verify: { enable: true, model: judge }\nedge:\n  agents:\n    - { address: '${verifier.address}', models: [judge] }\n`,
    );
  });
  after(async () => {
    await gateway.close();
    await verifier.close();
    await cloud.close();
  });

  test("the edge model's no keeps the answer from being reused; its yes lets it", async () => {
    const client = new OpenAI({ baseURL: `${gateway.pair.envoy.url}/v1`, apiKey: gateway.keys.shop ?? "", maxRetries: 0 });
    await client.chat.completions.create(question("How do I sort a dict by value in Python?"));
    await stored(gateway.semantic, 1);

    verifier.answer.content = "no";
    const before = cloud.requests.length;
    const refused = await client.chat.completions.create(question("How can I sort a dict by value in Python?")).withResponse();
    assert.equal(refused.response.headers.get("x-gearbox-route"), "cloud");
    assert.equal(cloud.requests.length, before + 1);
    assert.equal(gateway.semantic.stats.verify_rejected, 1);
    assert.equal(verifier.asked, 1);

    verifier.answer.content = "yes";
    const reused = await client.chat.completions.create(question("How can I sort a dict by value in Python?")).withResponse();
    assert.equal(reused.response.headers.get("x-gearbox-route"), "cache");
    assert.equal(cloud.requests.length, before + 1, "no upstream call once verified");
  });
});

describe("semantic cache on Redis that goes away", () => {
  let cloud: OpenAIUpstream;
  let redis: RedisChild;
  let gateway: Gateway;
  before(async () => {
    cloud = await startOpenAIUpstream({ apiKey: KEY });
    redis = await RedisChild.start();
    gateway = await startGateway(cloud, SEMANTIC, redis.url);
  });
  after(async () => {
    await gateway.close();
    await redis.down("SIGKILL");
    await cloud.close();
  });

  test("hits while Redis is up; misses (never errors) while it is down; hits again after it returns", async () => {
    const client = new OpenAI({ baseURL: `${gateway.pair.envoy.url}/v1`, apiKey: gateway.keys.shop ?? "", maxRetries: 0 });
    await client.chat.completions.create(question("How do I merge two dicts in Python?"));
    await stored(gateway.semantic, 1);
    const hit = await client.chat.completions.create(question("How can I merge two dicts in Python?")).withResponse();
    assert.equal(hit.response.headers.get("x-gearbox-route"), "cache");

    await redis.down("SIGKILL");
    const down = await client.chat.completions.create(question("How can I merge two dicts in Python?")).withResponse();
    assert.equal(down.response.status, 200);
    assert.equal(down.response.headers.get("x-gearbox-route"), "cloud", "Redis down: a miss, answered upstream");

    await redis.up();
    // A fresh Redis has nothing: the answer is stored again, then found again.
    const deadline = Date.now() + 10_000;
    let route = "";
    while (route !== "cache") {
      if (Date.now() > deadline) throw new Error("no hit after Redis came back");
      const r = await client.chat.completions.create(question("How can I merge two dicts in Python?")).withResponse();
      assert.equal(r.response.status, 200);
      route = r.response.headers.get("x-gearbox-route") ?? "";
      if (route !== "cache") await new Promise((res) => setTimeout(res, 100));
    }
  });
});
