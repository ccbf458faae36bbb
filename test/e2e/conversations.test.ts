/**
 * Conversations kept by the gateway, through both transports with the official OpenAI SDK (and
 * Anthropic's on `/v1/messages`): a client sends only its new turn and the provider gets the
 * history; a client that still sends it gets no duplicates; streams and tool calls are stored as
 * the client saw them; a small budget or a gear change sends a summary and the last two turns;
 * ids are scoped to the tenant; bad ids are 400s naming the field; a failing store never fails a call.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import { pino } from "pino";
import Anthropic from "@anthropic-ai/sdk";
import type { Message } from "../../common/canonical/types.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import { Conversations } from "../../extproc/conversation/conversations.ts";
import { MemoryConversationStore } from "../../extproc/conversation/memory-store.ts";
import type { ConversationStore } from "../../extproc/conversation/store.ts";
import type { GatewayConfig } from "../../extproc/config/load.ts";
import { startOpenAIUpstream, type OpenAIUpstream } from "../emulators/openai-upstream.ts";
import { createAuthDeps } from "../../extproc/governance/auth.ts";
import { Governor } from "../../extproc/governance/governor.ts";
import { generateKey } from "../../extproc/governance/keys.ts";
import { MemoryLimiter } from "../../extproc/store/memory-limiter.ts";
import { MemoryTenantStore } from "../../extproc/store/memory-tenant-store.ts";
import type { RequestRecord } from "../../extproc/processor/request-record.ts";
import { GatewayMetrics } from "../../extproc/telemetry/metrics.ts";
import { countRequest } from "../../extproc/telemetry/request-telemetry.ts";
import { entryTo, openAIProviderYaml, startTestGateway, testConfig, type TestGateway } from "../support/gateway.ts";

const KEY = "sk-conv-test";
const ENTRIES = ["front door", "Envoy + ext_proc"] as const;

function conversationsFor(config: GatewayConfig, store?: ConversationStore): Conversations {
  const settings = config.conversations;
  return new Conversations(store ?? new MemoryConversationStore({ ttlMs: settings.ttl_ms, maxConversations: 100 }), settings, silentLogger());
}

/** The messages the provider got on its `n`-th chat call (from 0), as role: text. */
function sent(upstream: OpenAIUpstream, n: number): string[] {
  const json = upstream.requests.filter((r) => r.path === "/v1/chat/completions")[n]?.json as { messages?: { role: string; content: unknown }[] } | undefined;
  return (json?.messages ?? []).map((m) => `${m.role}: ${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`);
}

function body(upstream: OpenAIUpstream, n: number): Record<string, unknown> {
  return (upstream.requests.filter((r) => r.path === "/v1/chat/completions")[n]?.json ?? {}) as Record<string, unknown>;
}

for (const entry of ENTRIES) {
  describe(`conversations through the ${entry}`, () => {
    let upstream: OpenAIUpstream;
    let gateway: TestGateway;
    let client: OpenAI;
    let close: () => Promise<void>;
    let answer: string;

    before(async () => {
      upstream = await startOpenAIUpstream({ apiKey: KEY });
      const config = testConfig(openAIProviderYaml(upstream.baseURL), { TEST_PROVIDER_KEY: KEY });
      gateway = await startTestGateway(config, { conversations: conversationsFor(config) });
      const reached = await entryTo(entry, gateway, upstream.url);
      close = reached.close;
      client = new OpenAI({ baseURL: `${reached.base}/v1`, apiKey: "app", maxRetries: 0 });
      const probe = await client.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "probe" }] });
      answer = probe.choices[0]?.message.content ?? "";
      assert.ok(answer.length > 0);
    });

    after(async () => {
      await close();
      await gateway.close();
      await upstream.close();
    });

    const ask = (conversation: string, messages: OpenAI.ChatCompletionMessageParam[], stream = false) =>
      client.chat.completions
        .create({
          model: "gpt-4o-mini",
          messages,
          stream: false,
          ...({ conversation_id: conversation } as object),
        } as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .withResponse()
        .then((r) => (stream ? r : r));

    test("only the new turn: the provider gets the stored history in front of it, never conversation_id", async () => {
      const before = upstream.requests.length;
      const id = `c-${entry.replace(/\W+/g, "-")}-1`;
      const first = await ask(id, [
        { role: "system", content: "Be brief." },
        { role: "user", content: "My name is Ada and my order is 4471." },
      ]);
      assert.match(first.response.headers.get("x-gearbox-conversation") ?? "", /^history=0; sent=0; summary=0; summarized=0$/);
      await ask(id, [
        { role: "system", content: "Be brief." },
        { role: "user", content: "What was my order number?" },
      ]);
      const n = upstream.requests.filter((r) => r.path === "/v1/chat/completions").length - 1;
      assert.equal(upstream.requests.length - before, 2);
      assert.deepEqual(sent(upstream, n), [
        "system: Be brief.",
        "user: My name is Ada and my order is 4471.",
        `assistant: ${answer}`,
        "user: What was my order number?",
      ]);
      assert.equal(body(upstream, n).conversation_id, undefined, "Gearbox's field never reaches a provider");
    });

    test("a client that still sends the whole history gets no duplicates", async () => {
      const id = `c-${entry.replace(/\W+/g, "-")}-2`;
      await ask(id, [{ role: "user", content: "Plan a trip to Lisbon on 12 May." }]);
      await ask(id, [
        { role: "user", content: "Plan a trip to Lisbon on 12 May." },
        { role: "assistant", content: answer },
        { role: "user", content: "And back on 19 May." },
      ]);
      const n = upstream.requests.filter((r) => r.path === "/v1/chat/completions").length - 1;
      assert.deepEqual(sent(upstream, n), ["user: Plan a trip to Lisbon on 12 May.", `assistant: ${answer}`, "user: And back on 19 May."]);
      // The store holds each message once: the third turn gets the four before it.
      await ask(id, [{ role: "user", content: "Thanks." }]);
      assert.equal(sent(upstream, n + 1).length, 5);
    });

    test("the header id works as the body's does; a streamed answer is stored as the client saw it", async () => {
      const id = `c-${entry.replace(/\W+/g, "-")}-3`;
      const stream = await client.chat.completions.create(
        { model: "gpt-4o-mini", messages: [{ role: "user", content: "Count to three." }], stream: true },
        { headers: { "x-gearbox-conversation-id": id } },
      );
      let streamed = "";
      for await (const chunk of stream) streamed += chunk.choices[0]?.delta.content ?? "";
      assert.ok(streamed.length > 0);
      await client.chat.completions.create(
        { model: "gpt-4o-mini", messages: [{ role: "user", content: "Again." }] },
        { headers: { "x-gearbox-conversation-id": id } },
      );
      const n = upstream.requests.filter((r) => r.path === "/v1/chat/completions").length - 1;
      assert.deepEqual(sent(upstream, n), ["user: Count to three.", `assistant: ${streamed}`, "user: Again."]);
    });

    test("a bad id is a 400 naming the field; the call goes nowhere", async () => {
      const before = upstream.requests.length;
      await assert.rejects(ask("bad id with spaces", [{ role: "user", content: "x" }]), (err: unknown) => {
        assert.ok(err instanceof OpenAI.APIError);
        assert.equal(err.status, 400);
        assert.equal(err.param, "conversation_id");
        assert.equal(err.code, "invalid_conversation_id");
        return true;
      });
      await assert.rejects(
        client.chat.completions.create(
          { model: "gpt-4o-mini", messages: [{ role: "user", content: "x" }] },
          { headers: { "x-gearbox-conversation-id": "x".repeat(129) } },
        ),
        (err: unknown) => err instanceof OpenAI.APIError && err.status === 400 && err.param === "x-gearbox-conversation-id",
      );
      assert.equal(upstream.requests.length, before);
    });
  });
}

describe("conversations: budgets, tenants, the API and a failing store (front door)", () => {
  let upstream: OpenAIUpstream;

  before(async () => {
    upstream = await startOpenAIUpstream({ apiKey: KEY });
  });
  after(async () => upstream.close());

  test("over the budget, the provider gets the summary of the older turns and the last two in full", async () => {
    // A 400-token window at the default 50 % share: a few turns fill it.
    const config = testConfig(openAIProviderYaml(upstream.baseURL, "conversations:\n  context_windows: { gpt-4o-mini: 400 }\n"), { TEST_PROVIDER_KEY: KEY });
    const gateway = await startTestGateway(config, { conversations: conversationsFor(config) });
    try {
      const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: "app", maxRetries: 0 });
      const turns = [
        "Our project is called Bluefin and the budget is 12000 euros.",
        "We decided to ship on 3 March. Filler words about nothing much at all, really nothing.",
        "Nice weather today and some more chatter with no facts in it whatsoever, just talk.",
        "Just chatting here, nothing of note, only some words to make the history longer.",
        "What was the budget?",
      ];
      for (const content of turns)
        await client.chat.completions.create({
          model: "gpt-4o-mini",
          messages: [{ role: "user", content }],
          ...({ conversation_id: "budget-1" } as object),
        } as OpenAI.ChatCompletionCreateParamsNonStreaming);
      const n = upstream.requests.filter((r) => r.path === "/v1/chat/completions").length - 1;
      const last = sent(upstream, n);
      assert.match(last[0] ?? "", /^system: Summary of the earlier conversation/);
      assert.match(last[0] ?? "", /Bluefin and the budget is 12000 euros/, "the planted facts are in the summary verbatim");
      assert.match(last[0] ?? "", /ship on 3 March/);
      assert.doesNotMatch(last[0] ?? "", /Nice weather/, "chatter is not");
      // Summary, then the last two full turns (user + assistant each), then the new turn.
      assert.equal(last.length, 1 + 4 + 1);
      assert.equal(last.at(-1), "user: What was the budget?");
      const record = gateway.logs.filter((l) => l.msg === "request").at(-1) as {
        conversation?: { history_tokens: number; sent_tokens: number; summary_tokens: number; summarized: number; ratio: number };
      };
      assert.ok(record.conversation);
      assert.ok(record.conversation.sent_tokens < record.conversation.history_tokens, JSON.stringify(record.conversation));
      assert.equal(record.conversation.summarized, 4);
      const c = record.conversation;
      assert.ok(c.summary_tokens > 0 && c.ratio === Math.round((c.sent_tokens / c.history_tokens) * 1000) / 1000, JSON.stringify(c));
      // The metric of tokens saved, from this request's record.
      const metrics = new GatewayMetrics({}, { defaultMetrics: false });
      countRequest(metrics, record as unknown as RequestRecord, config);
      const saved = (await metrics.registry.getSingleMetric("gearbox_conversation_tokens_saved_total")?.get())?.values ?? [];
      assert.deepEqual(
        saved.map((v) => [v.labels.route, v.value]),
        [["cloud", c.history_tokens - c.sent_tokens]],
      );
    } finally {
      await gateway.close();
    }
  });

  test("GET and DELETE /v1/conversations/{id}; unknown ids are 404; require_existing refuses them", async () => {
    const config = testConfig(openAIProviderYaml(upstream.baseURL, "conversations:\n  require_existing: true\n"), { TEST_PROVIDER_KEY: KEY });
    const store = new MemoryConversationStore({ ttlMs: 60_000, maxConversations: 10 });
    await store.append(
      "default",
      "known",
      [
        { role: "user", content: "hello" },
        { role: "assistant", content: "hi" },
      ] satisfies Message[],
      "cloud",
    );
    const gateway = await startTestGateway(config, { conversations: conversationsFor(config, store) });
    try {
      const base = gateway.baseURL;
      const got = await fetch(`${base}/conversations/known`);
      assert.equal(got.status, 200);
      const json = (await got.json()) as { object: string; messages: { role: string; content: string }[]; last_target: string };
      assert.equal(json.object, "conversation");
      assert.deepEqual(
        json.messages.map((m) => m.content),
        ["hello", "hi"],
      );
      assert.equal(json.last_target, "cloud");
      const client = new OpenAI({ baseURL: base, apiKey: "app", maxRetries: 0 });
      await assert.rejects(
        client.chat.completions.create({
          model: "gpt-4o-mini",
          messages: [{ role: "user", content: "x" }],
          ...({ conversation_id: "never-seen" } as object),
        } as OpenAI.ChatCompletionCreateParamsNonStreaming),
        (err: unknown) => err instanceof OpenAI.APIError && err.status === 404 && err.code === "conversation_not_found",
      );
      assert.equal((await fetch(`${base}/conversations/known`, { method: "DELETE" })).status, 200);
      assert.equal((await fetch(`${base}/conversations/known`)).status, 404);
      assert.equal((await fetch(`${base}/conversations/known`, { method: "DELETE" })).status, 404);
      assert.equal((await fetch(`${base}/conversations/bad%20id`)).status, 400);
      assert.equal((await fetch(`${base}/conversations/known`, { method: "PUT" })).status, 405);
    } finally {
      await gateway.close();
    }
  });

  test("the store failing costs the history, never the call", async () => {
    const config = testConfig(openAIProviderYaml(upstream.baseURL), { TEST_PROVIDER_KEY: KEY });
    const broken: ConversationStore = {
      get: () => Promise.reject(new Error("connection refused")),
      append: () => Promise.reject(new Error("connection refused")),
      saveSummary: () => Promise.reject(new Error("connection refused")),
      compact: () => Promise.reject(new Error("connection refused")),
      delete: () => Promise.reject(new Error("connection refused")),
      close: () => Promise.resolve(),
    };
    const warned: Record<string, unknown>[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => warned.push(JSON.parse(line) as Record<string, unknown>) });
    const gateway = await startTestGateway(config, { conversations: new Conversations(broken, config.conversations, logger) });
    try {
      const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: "app", maxRetries: 0 });
      const res = await client.chat.completions
        .create({
          model: "gpt-4o-mini",
          messages: [{ role: "user", content: "still works" }],
          ...({ conversation_id: "down" } as object),
        } as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .withResponse();
      assert.equal(res.response.status, 200);
      assert.match(res.response.headers.get("x-gearbox-conversation") ?? "", /store=unavailable/);
      const n = upstream.requests.filter((r) => r.path === "/v1/chat/completions").length - 1;
      assert.deepEqual(sent(upstream, n), ["user: still works"]);
      const record = gateway.logs.filter((l) => l.msg === "request").at(-1) as { conversation?: { degraded?: boolean } };
      assert.equal(record.conversation?.degraded, true, "the request log says the store was not there");
      assert.ok(
        warned.some((l) => l.msg === "conversation store failed; the request goes on with what the client sent" && l.err === "connection refused"),
        "and the failure is logged",
      );
    } finally {
      await gateway.close();
    }
  });

  test("Anthropic clients on /v1/messages: the history in front, in Anthropic's schema", async () => {
    const config = testConfig(openAIProviderYaml(upstream.baseURL), { TEST_PROVIDER_KEY: KEY });
    const gateway = await startTestGateway(config, { conversations: conversationsFor(config) });
    try {
      const client = new Anthropic({ baseURL: gateway.baseURL.replace("/v1", ""), apiKey: "app", maxRetries: 0 });
      const first = await client.messages.create({
        model: "gpt-4o-mini",
        max_tokens: 64,
        messages: [{ role: "user", content: "Remember the code word: heron." }],
        ...({ conversation_id: "anth-1" } as object),
      } as Anthropic.MessageCreateParamsNonStreaming);
      const text = first.content.map((b) => (b.type === "text" ? b.text : "")).join("");
      await client.messages.create({
        model: "gpt-4o-mini",
        max_tokens: 64,
        messages: [{ role: "user", content: "What was the code word?" }],
        ...({ conversation_id: "anth-1" } as object),
      } as Anthropic.MessageCreateParamsNonStreaming);
      const n = upstream.requests.filter((r) => r.path === "/v1/chat/completions").length - 1;
      assert.deepEqual(sent(upstream, n), ["user: Remember the code word: heron.", `assistant: ${text}`, "user: What was the code word?"]);
    } finally {
      await gateway.close();
    }
  });
});

test("conversations are scoped to the tenant: the same id under another key's tenant is another conversation", async () => {
  const upstream = await startOpenAIUpstream({ apiKey: KEY });
  const config = testConfig(openAIProviderYaml(upstream.baseURL, "tenants:\n  - { id: alpha }\n  - { id: beta }\n"), { TEST_PROVIDER_KEY: KEY });
  const tenants = new MemoryTenantStore();
  const keys: Record<string, string> = {};
  for (const tenant of ["alpha", "beta"]) {
    const { key, record } = generateKey({ role: "call", tenant, name: `${tenant} app`, createdBy: "test" });
    await tenants.putKey(record);
    keys[tenant] = key;
  }
  const governor = new Governor({ store: new MemoryLimiter(), runaway: config.runaway, logger: silentLogger() });
  const gateway = await startTestGateway(config, {
    conversations: conversationsFor(config),
    governance: { auth: createAuthDeps(config, tenants, {}), governor },
  });
  try {
    const as = (tenant: string) => new OpenAI({ baseURL: gateway.baseURL, apiKey: keys[tenant] ?? "", maxRetries: 0 });
    const create = (tenant: string, content: string) =>
      as(tenant).chat.completions.create({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content }],
        ...({ conversation_id: "shared-id" } as object),
      } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    await create("alpha", "alpha's secret is 991");
    await create("beta", "hello from beta");
    const n = upstream.requests.filter((r) => r.path === "/v1/chat/completions").length - 1;
    assert.deepEqual(sent(upstream, n), ["user: hello from beta"], "beta does not get alpha's history");
    const read = (tenant: string) => fetch(`${gateway.baseURL}/conversations/shared-id`, { headers: { authorization: `Bearer ${keys[tenant] ?? ""}` } });
    const alpha = (await (await read("alpha")).json()) as { messages: { content: string }[] };
    assert.equal(alpha.messages[0]?.content, "alpha's secret is 991");
    const beta = (await (await read("beta")).json()) as { messages: { content: string }[] };
    assert.equal(beta.messages[0]?.content, "hello from beta");
    assert.equal((await fetch(`${gateway.baseURL}/conversations/shared-id`)).status, 401, "no key, no conversation");
  } finally {
    await gateway.close();
    await upstream.close();
  }
});
