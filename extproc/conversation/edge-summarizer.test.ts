/**
 * The edge summarizer against a real edge agent (llama.cpp with the tiny GGUF: the text it writes
 * means nothing, the mechanics are real) and against agents that fail or are too slow: the
 * extractive summary is sent either way, the edge's replaces it in the store when written, and a
 * failure leaves the extractive one standing. And edge token counts from the agent's tokenizer
 * (`/v1/tokenize`).
 */
import assert from "node:assert/strict";
import { mkdtemp } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";
import type { Message } from "../../common/canonical/types.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import { createLlamaCppEngine } from "../../edge-agent/engines/llamacpp.ts";
import { createOllamaEngine } from "../../edge-agent/engines/ollama.ts";
import { createOnnxEngine } from "../../edge-agent/engines/onnx.ts";
import { writeTinyGguf } from "../../edge-agent/model/tiny-gguf.ts";
import { ModelRegistry } from "../../edge-agent/registry.ts";
import { startEdgeAgent, type EdgeAgentServer } from "../../edge-agent/server.ts";
import type { EdgeDirectory } from "../edge/agents.ts";
import { conversationsSchema } from "./config-schema.ts";
import { Conversations } from "./conversations.ts";
import { EdgeSummarizer } from "./edge-summarizer.ts";
import { EdgeTokenCounts } from "./edge-tokens.ts";
import { MemoryConversationStore } from "./memory-store.ts";
import { tokenCounterFor } from "./tokens.ts";

let registry: ModelRegistry;
let agent: EdgeAgentServer;

const at = (address: string): EdgeDirectory => ({
  serves: (m) => m === "tiny",
  pick: (m) => (m === "tiny" ? { address, models: new Set(["tiny"]) } : undefined),
});

before(async () => {
  const file = path.join(await mkdtemp(path.join(tmpdir(), "edge-summary-")), "tiny.gguf");
  await writeTinyGguf(file);
  const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
  registry = new ModelRegistry(
    { llamacpp: () => createLlamaCppEngine({ llama }), ollama: () => createOllamaEngine(), onnx: () => createOnnxEngine() },
    { maxConcurrent: 1, maxQueue: 4, retryAfterSeconds: 1 },
  );
  await registry.load({ id: "tiny", engine: "llamacpp", source: file, threads: 1, contextLength: 512 });
  agent = await startEdgeAgent({ registry, logger: silentLogger() }, 0, "127.0.0.1");
});

after(async () => {
  await agent.close();
  await registry.close();
});

const u = (content: string): Message => ({ role: "user", content });
const a = (content: string): Message => ({ role: "assistant", content });
const HISTORY = [u("My name is Ada."), a("Hello Ada."), u("The budget is 4471 euros."), a("Noted."), u("Ship on 3 March?"), a("Yes."), u("ok"), a("ok")];

async function conversationWith(summarizer: EdgeSummarizer) {
  const store = new MemoryConversationStore({ ttlMs: 60_000, maxConversations: 10 });
  await store.append("t", "c", HISTORY, "cloud");
  const conversations = new Conversations(store, conversationsSchema.parse({}), silentLogger(), { summarizer });
  const turn = await conversations.open("t", "c", "openai", { model: "tiny", messages: [] }, [u("What was the budget?")], "r1");
  assert.ok(!(turn instanceof Error));
  // The gear changes (cloud → edge): the history is summarized whatever the budget.
  const body = JSON.stringify(turn.forTarget("edge", "tiny"));
  return { store, conversations, body };
}

async function summaryOf(store: MemoryConversationStore, waitFor: (by: string) => boolean, ms: number): Promise<string | undefined> {
  const until = Date.now() + ms;
  for (;;) {
    const by = (await store.get("t", "c"))?.summary?.by;
    if ((by !== undefined && waitFor(by)) || Date.now() > until) return by;
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("a real edge agent: the request is sent with the extractive summary, the edge's replaces it in the store for the next turn", async () => {
  const summarizer = new EdgeSummarizer({ agents: () => at(`127.0.0.1:${agent.port}`), model: "tiny", timeoutMs: 30_000, maxTokens: 16 });
  const { store, conversations, body } = await conversationWith(summarizer);
  assert.match(body, /The budget is 4471 euros\./, "this request has the extractive summary");
  assert.equal(await summaryOf(store, (by) => by === "edge:tiny", 30_000), "edge:tiny");
  const stored = (await store.get("t", "c"))?.summary;
  assert.ok(stored && stored.text.length > 0 && stored.through === 4);
  const next = await conversations.open("t", "c", "openai", { model: "tiny", messages: [] }, [u("And the date?")], "r2");
  assert.ok(!(next instanceof Error));
  const sent = JSON.stringify(next.forTarget("edge", "tiny"));
  assert.ok(sent.includes(JSON.stringify(stored.text).slice(1, -1)), "the next turn is sent the edge's summary");
});

test("a slow agent times out, a failing one answers 500, none serves the model: the extractive summary stands", async () => {
  const held: http.ServerResponse[] = [];
  const slow = http.createServer((_req, res) => held.push(res));
  const failing = http.createServer((_req, res) => res.writeHead(500).end("{}"));
  await Promise.all([new Promise<void>((r) => slow.listen(0, "127.0.0.1", r)), new Promise<void>((r) => failing.listen(0, "127.0.0.1", r))]);
  try {
    const address = (s: http.Server) => `127.0.0.1:${(s.address() as AddressInfo).port}`;
    const cases: [EdgeDirectory | undefined, string][] = [
      [at(address(slow)), "timeout"],
      [at(address(failing)), "edge_status:500"],
      [undefined, "no_agent"],
    ];
    for (const [agents, reason] of cases) {
      const summarizer = new EdgeSummarizer({ agents: () => agents, model: "tiny", timeoutMs: 300, maxTokens: 16 });
      assert.deepEqual(await summarizer.summarize(undefined, HISTORY.slice(0, 4)), { ok: false, reason });
      const { store, body } = await conversationWith(summarizer);
      assert.match(body, /The budget is 4471 euros\./);
      assert.equal(await summaryOf(store, (by) => by !== "extractive", 600), "extractive", reason);
    }
  } finally {
    for (const res of held) res.destroy();
    slow.close();
    failing.close();
  }
});

test("the edge agent's /v1/tokenize counts with the model's tokenizer; bad input is a 400 naming the field", async () => {
  const base = `http://127.0.0.1:${agent.port}/v1/tokenize`;
  const post = (body: unknown) => fetch(base, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const ok = await post({ model: "tiny", texts: ["The budget is 4471 euros.", ""] });
  assert.equal(ok.status, 200);
  const json = (await ok.json()) as { object: string; model: string; counts: number[] };
  assert.equal(json.object, "tokenize");
  assert.equal(json.counts.length, 2);
  assert.ok(Number.isInteger(json.counts[0]) && (json.counts[0] ?? 0) > 0);
  assert.equal(json.counts[1], 0);
  for (const [body, param] of [
    [{ model: "tiny", texts: [] }, "texts"],
    [{ model: "tiny", texts: [1] }, "texts"],
    [{ texts: ["x"] }, "model"],
  ] as const) {
    const res = await post(body);
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: { param: string } }).error.param, param);
  }
  assert.equal((await post({ model: "absent", texts: ["x"] })).status, 404);
});

test("edge token counts: a stand-in on first sight, the agent's count once it answered (batched beside the request); a failing agent keeps the stand-in", async () => {
  const text = "Ship the Bluefin release on 3 March with a budget of 4471 euros, Ada said.";
  const agentCount = (
    (await (await fetch(`http://127.0.0.1:${agent.port}/v1/tokenize`, { method: "POST", body: JSON.stringify({ model: "tiny", texts: [text] }) })).json()) as {
      counts: number[];
    }
  ).counts[0];
  const standIn = tokenCounterFor("gpt-4o").text(text);
  assert.notEqual(agentCount, standIn, "the tiny model's vocabulary is not o200k's (else this test could not tell them apart)");
  const counts = new EdgeTokenCounts({ agents: () => at(`127.0.0.1:${agent.port}`) });
  const counter = counts.counterFor("tiny");
  assert.equal(counter.text(text), standIn);
  await counts.settled("tiny");
  assert.equal(counter.text(text), agentCount);
  assert.equal(counter.messages([u(text)]), 3 + (agentCount ?? 0) + 3);

  const failing = new EdgeTokenCounts({ agents: () => at("127.0.0.1:1"), timeoutMs: 300 });
  assert.equal(failing.counterFor("tiny").text(text), standIn);
  await failing.settled("tiny");
  assert.equal(failing.counterFor("tiny").text(text), standIn);
});
