/**
 * The semantic cache's orchestration over the real memory store and the built-in embedder;
 * verification through a scripted `Verifier`.
 */
import { intentsConflict } from "./semantic-cache.ts";
import type { IntentResult } from "../../routing/intent/classify.ts";
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import type { GatewayConfig } from "../../config/load.ts";
import type { SemanticCacheConfig } from "../../config/schema.ts";
import { openaiChatEndpoint } from "../../endpoints/openai-chat.ts";
import type { ParsedCall } from "../../endpoints/spec.ts";
import { silentLogger } from "../../../common/telemetry/logger.ts";
import { testConfig } from "../../../test/support/gateway.ts";
import type { Embedder } from "./embedder.ts";
import { HASHED_DIMENSIONS, HASHED_EMBEDDER_NAME, HashedEmbedder } from "./hashed-embedder.ts";
import { WorkerIndex } from "./index-client.ts";
import { MemorySemanticStore } from "./memory-semantic-store.ts";
import { SemanticCache, semanticUse, type SemanticLookup } from "./semantic-cache.ts";
import type { SemanticEntry } from "./semantic-store.ts";
import type { Verifier, VerifyResult } from "./verifier.ts";

/** The real memory store (usearch index on a worker thread); `stored` keeps what it was given, for assertions. */
class TestStore extends MemorySemanticStore {
  readonly stored: SemanticEntry[] = [];
  constructor(now: () => number) {
    super({
      index: new WorkerIndex({ dimensions: HASHED_DIMENSIONS, logger: silentLogger() }),
      maxBytes: 1 << 20,
      maxEntries: 1000,
      logger: silentLogger(),
      now,
    });
  }
  override insert(entry: SemanticEntry): Promise<void> {
    this.stored.push(entry);
    return super.insert(entry);
  }
}

const stores: TestStore[] = [];
after(async () => {
  for (const s of stores) await s.close();
});

const YAML = "cache:\n  semantic:\n    enable: true\n    threshold: 0.5\n    thresholds: { intents: { summarize: 0.8 }, tenants: { acme: 0.95 } }\n";

function parse(body: Record<string, unknown>): ParsedCall {
  const parsed = openaiChatEndpoint.parse({ model: "gpt-4o", temperature: 0, ...body });
  assert.ok(parsed.ok);
  return parsed.value;
}

const ask = (question: string, extra: Record<string, unknown> = {}) =>
  parse({
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: question },
    ],
    ...extra,
  });

function lookupOf(config: GatewayConfig, question: string, extra: Record<string, unknown> = {}, tenant = "t1", intent = "qa"): SemanticLookup {
  const use = semanticUse(config, "chat_completions", ask(question, extra), tenant, intent, undefined, HASHED_EMBEDDER_NAME);
  assert.ok(use?.kind === "lookup");
  return use;
}

const COMPLETION = JSON.stringify({
  id: "c1",
  object: "chat.completion",
  created: 1,
  model: "gpt-4o",
  choices: [{ index: 0, message: { role: "assistant", content: "Sunny, 24 °C." }, finish_reason: "stop" }],
});

function cacheWith(options: Partial<SemanticCacheConfig> = {}, deps: { embedder?: Embedder; verifier?: Verifier; now?: () => number } = {}) {
  const config = testConfig(YAML);
  const store = new TestStore(deps.now ?? Date.now);
  stores.push(store);
  const cache = new SemanticCache({
    store,
    embedder: deps.embedder ?? new HashedEmbedder(),
    config: { ...config.cache.semantic, ...options },
    logger: silentLogger(),
    ...(deps.verifier && { verifier: deps.verifier }),
    ...(deps.now && { now: deps.now }),
  });
  return { config, store, cache };
}

/** Stores `completion` for `question`, waiting for the fire-and-forget insert. */
async function seed(cache: SemanticCache, store: TestStore, use: SemanticLookup, completion = COMPLETION): Promise<void> {
  const before = store.stats().entries;
  cache.store(use, completion);
  for (let i = 0; i < 500 && store.stats().entries === before; i++) await new Promise((r) => setTimeout(r, 2));
  assert.equal(store.stats().entries, before + 1);
}

describe("semanticUse: which requests look up, under which scope and threshold", () => {
  const config = testConfig(YAML);

  test("off, other endpoints, sampling, tools, non-text or non-user last turns: no part", () => {
    assert.equal(semanticUse(testConfig(""), "chat_completions", ask("hi there"), "t", "qa", undefined, "e"), undefined, "off by default");
    assert.equal(semanticUse(config, "embeddings", ask("hi there"), "t", "qa", undefined, "e"), undefined);
    assert.equal(
      semanticUse(config, "chat_completions", parse({ temperature: 1, messages: [{ role: "user", content: "hi" }] }), "t", "qa", undefined, "e"),
      undefined,
    );
    const tools = [{ type: "function", function: { name: "weather", parameters: { type: "object" } } }];
    assert.equal(semanticUse(config, "chat_completions", ask("weather today?", { tools }), "t", "qa", undefined, "e"), undefined);
    const image = parse({
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "what is this" },
            { type: "image_url", image_url: { url: "https://x/y.png" } },
          ],
        },
      ],
    });
    assert.equal(semanticUse(config, "chat_completions", image, "t", "qa", undefined, "e"), undefined);
    const lastAssistant = parse({
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "hello" },
      ],
    });
    assert.equal(semanticUse(config, "chat_completions", lastAssistant, "t", "qa", undefined, "e"), undefined);
    assert.equal(semanticUse(config, "chat_completions", ask("x".repeat(2001)), "t", "qa", undefined, "e"), undefined, "too long to be a question");
  });

  test("x-gearbox-cache: bypass", () => {
    assert.deepEqual(semanticUse(config, "chat_completions", ask("hi there"), "t", "qa", " Bypass ", "e"), { kind: "bypass" });
  });

  test("the question is the last user turn; the scope holds everything else that shapes the answer", () => {
    const a = lookupOf(config, "What is the weather today?");
    assert.equal(a.question, "What is the weather today?");
    assert.equal(lookupOf(config, "How is the weather today?").scope, a.scope, "another question, same scope");
    assert.equal(lookupOf(config, "What is the weather today?", { stream: true }).scope, a.scope, "stream is not scoped");
    assert.equal(
      lookupOf(config, "What is the weather today?", {}, "t1", "chitchat").scope,
      a.scope,
      "the intent is a guard, not a scope (labels flip between paraphrases)",
    );
    const differs = [
      lookupOf(config, "What is the weather today?", {}, "t2"),
      lookupOf(config, "What is the weather today?", { model: "gpt-4o-mini" }),
      lookupOf(config, "What is the weather today?", { max_tokens: 5 }),
      lookupOf(config, "What is the weather today?", { response_format: { type: "json_object" } }),
      {
        ...lookupOf(config, "What is the weather today?"),
        scope: (
          semanticUse(
            config,
            "chat_completions",
            parse({ messages: [{ role: "user", content: "What is the weather today?" }] }),
            "t1",
            "qa",
            undefined,
            HASHED_EMBEDDER_NAME,
          ) as SemanticLookup
        ).scope,
      },
      {
        ...a,
        scope: (semanticUse(config, "chat_completions", ask("What is the weather today?"), "t1", "qa", undefined, "edge:minilm") as SemanticLookup).scope,
      },
    ];
    for (const [i, other] of differs.entries()) assert.notEqual(other.scope, a.scope, `case ${i}`);
  });

  test("thresholds: default, then the intent's, then the tenant's", () => {
    assert.equal(lookupOf(config, "q?").threshold, 0.5);
    assert.equal(lookupOf(config, "q?", {}, "t1", "summarize").threshold, 0.8);
    assert.equal(lookupOf(config, "q?", {}, "acme", "summarize").threshold, 0.95, "the tenant wins");
  });
});

describe("SemanticCache", () => {
  test("a paraphrase hits; an unrelated question, another scope or an expired entry misses", async () => {
    let now = 1_000;
    const { config, store, cache } = cacheWith({ ttl_ms: 60_000 }, { now: () => now });
    await seed(cache, store, lookupOf(config, "What is the weather today?"));
    const hit = await cache.lookup(lookupOf(config, "How is the weather today?"));
    assert.equal(hit?.completion, COMPLETION);
    assert.equal(hit?.entryId, store.stored[0]?.id);
    assert.ok(hit !== undefined && hit.similarity >= 0.5 && hit.similarity < 1);
    assert.equal(await cache.lookup(lookupOf(config, "Who wrote War and Peace?")), undefined);
    assert.equal(await cache.lookup(lookupOf(config, "How is the weather today?", {}, "t2")), undefined, "another tenant");
    now += 60_001;
    assert.equal(await cache.lookup(lookupOf(config, "How is the weather today?")), undefined, "expired");
    assert.deepEqual({ hit: cache.stats.hit, miss: cache.stats.miss }, { hit: 1, miss: 3 });
    assert.equal(store.stored[0]?.expiresAt, 61_000);
  });

  test("the entity guard and the fingerprint reject near neighbours, and count why", async () => {
    const { config, store, cache } = cacheWith();
    await seed(cache, store, lookupOf(config, "What's the weather in Paris today?"));
    assert.equal(await cache.lookup(lookupOf(config, "What's the weather in Paris tomorrow?")), undefined);
    assert.equal(cache.stats.guard_rejected, 1);
    assert.equal(await cache.lookup(lookupOf(config, "Is the weather in Paris good today?")), undefined);
    assert.equal(cache.stats.fingerprint_rejected, 1);
    assert.ok(await cache.lookup(lookupOf(config, "How's the weather in Paris today?")), "a true paraphrase passes both");
    const off = cacheWith({ entity_guard: false, fingerprint: false });
    await seed(off.cache, off.store, lookupOf(config, "What's the weather in Paris today?"));
    assert.ok(await off.cache.lookup(lookupOf(config, "What's the weather in Paris tomorrow?")), "with the guard off, the wrong day hits");
  });

  test("the first candidate that passes wins, not merely the nearest", async () => {
    const { config, store, cache } = cacheWith();
    await seed(cache, store, lookupOf(config, "What's the weather in Paris tomorrow?"), COMPLETION.replace("c1", "tomorrow"));
    await seed(cache, store, lookupOf(config, "Tell me the weather for Paris today"), COMPLETION.replace("c1", "today"));
    const hit = await cache.lookup(lookupOf(config, "What's the weather in Paris today?"));
    assert.match(hit?.completion ?? "", /"today"/);
    assert.equal(cache.stats.guard_rejected, 1);
  });

  test("verification: yes verifies; no, a low confidence or a failure is a miss", async () => {
    const verdicts: VerifyResult[] = [
      { kind: "same", confidence: 0.9 },
      { kind: "different", answer: "no", confidence: 0.8 },
      { kind: "failed", reason: "timeout" },
    ];
    const asked: [string, string][] = [];
    const verifier: Verifier = {
      verify: (question, cached) => {
        asked.push([question, cached]);
        return Promise.resolve(verdicts.shift() ?? { kind: "failed", reason: "none left" });
      },
    };
    const { config, store, cache } = cacheWith({}, { verifier });
    await seed(cache, store, lookupOf(config, "What is the weather today?"));
    const use = lookupOf(config, "How is the weather today?");
    assert.ok(await cache.lookup(use));
    assert.deepEqual(asked[0], ["How is the weather today?", "What is the weather today?"]);
    assert.equal(await cache.lookup(use), undefined);
    assert.equal(await cache.lookup(use), undefined);
    assert.deepEqual({ hit: cache.stats.hit, miss: cache.stats.miss, verify_rejected: cache.stats.verify_rejected }, { hit: 1, miss: 2, verify_rejected: 2 });
  });

  test("an embedder failure is a miss, counted; nothing is stored without a vector", async () => {
    const failing: Embedder = { name: "broken", dimensions: 4, embed: () => Promise.reject(new Error("down")) };
    const { config, store, cache } = cacheWith({}, { embedder: failing });
    assert.equal(await cache.lookup(lookupOf(config, "What is the weather today?")), undefined);
    cache.store(lookupOf(config, "What is the weather today?"), COMPLETION);
    await new Promise((r) => setImmediate(r));
    assert.equal(store.stored.length, 0);
    assert.deepEqual({ miss: cache.stats.miss, embed_error: cache.stats.embed_error }, { miss: 1, embed_error: 2 });
  });

  test("only valid completions within max_entry_bytes are stored; the lookup's vector is reused", async () => {
    let calls = 0;
    const inner = new HashedEmbedder();
    const counting: Embedder = { name: inner.name, dimensions: inner.dimensions, embed: (t, s) => (calls++, inner.embed(t, s)) };
    const { config, store, cache } = cacheWith({ max_entry_bytes: 400 }, { embedder: counting });
    const use = lookupOf(config, "What is the weather today?");
    for (const bad of ["not json", "{}", JSON.stringify({ choices: [] }), JSON.stringify({ choices: [{ message: { content: "x".repeat(500) } }] })])
      cache.store(use, bad);
    assert.equal(cache.stats.store_skipped, 4);
    assert.equal(await cache.lookup(use), undefined);
    await seed(cache, store, use);
    assert.equal(calls, 1, "the miss's vector was stored, not embedded again");
    assert.equal(store.stored[0]?.question, "What is the weather today?");
    assert.equal(store.stored[0]?.tenant, "t1");
  });
});

test("intent guard: only two sure, different labels keep questions apart", () => {
  const r = (intent: IntentResult["intent"], confidence: number, source: IntentResult["source"] = "model"): IntentResult => ({ intent, confidence, source });
  assert.equal(intentsConflict(r("summarize", 0.9, "keywords"), r("translate", 0.9, "keywords")), true);
  assert.equal(intentsConflict(r("code_gen", 0.85), r("qa", 0.9)), true);
  assert.equal(intentsConflict(r("translate", 0.48), r("qa", 0.57)), false, "unsure model labels flip between paraphrases");
  assert.equal(intentsConflict(r("qa", 0.9), r("unknown", 0.3)), false);
  assert.equal(intentsConflict(r("qa", 0.9), r("qa", 0.95, "keywords")), false);
});
