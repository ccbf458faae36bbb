/**
 * The edge intent layer. The real edge agent on the generated tiny model is exercised in
 * `test/e2e/cascade.test.ts` (its random weights never name a label); a model that labels well
 * cannot run here, so the positive path uses a local HTTP stand-in that answers as the agent
 * does (OpenAI completion + `x-gearbox-confidence`).
 */
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, describe, test } from "node:test";
import { pino } from "pino";
import { parseConfigText, resolveConfig } from "../../config/load.ts";
import type { Outcome } from "../../processor/outcome.ts";
import { RequestProcessor } from "../../processor/processor.ts";
import { labellingRequest, parseIntentLabel } from "./edge-classifier.ts";
import { Runtime } from "../../runtime/runtime.ts";

test("labels are read from the answers small models give", () => {
  assert.equal(parseIntentLabel("code_gen"), "code_gen");
  assert.equal(parseIntentLabel("Label: math."), "math");
  assert.equal(parseIntentLabel("  Extract entity"), "extract_entity");
  assert.equal(parseIntentLabel("multi-hop reasoning"), "multi_hop_reasoning");
  assert.equal(parseIntentLabel("The task is TRANSLATE"), "translate");
  assert.equal(parseIntentLabel("qa\nsummarize"), "qa", "the first label wins");
  assert.equal(parseIntentLabel("unknown"), undefined, "unknown is not a label the edge can give");
  assert.equal(parseIntentLabel("mathematics homework"), undefined, "a label inside a word is not a label");
  assert.equal(parseIntentLabel("\u0000\u00ff garbage"), undefined);
  assert.equal(parseIntentLabel(""), undefined);
});

test("the labelling request: greedy, a few tokens, the last user message cut to head and tail", () => {
  const long = `${"a".repeat(2000)}END`;
  const req = labellingRequest(
    [
      { role: "user", content: "first" },
      { role: "assistant", content: "x" },
      { role: "user", content: long },
    ],
    "qwen-small",
  );
  assert.equal(req.model, "qwen-small");
  assert.equal(req.temperature, 0);
  assert.equal(req.max_tokens, 8);
  const messages = req.messages as { role: string; content: string }[];
  assert.match(messages[0]?.content ?? "", /code_gen/);
  const user = messages[1]?.content ?? "";
  assert.ok(user.includes("END") && user.length < 1100 && !user.includes("first"));
});

/** A local stand-in for an edge agent: answers `label` with `confidence`, or hangs. */
async function standIn(behaviour: { label?: string; confidence?: number; status?: number; hang?: boolean }) {
  const seen: unknown[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      if (behaviour.hang) return;
      const body = JSON.stringify({
        id: "x",
        object: "chat.completion",
        created: 1,
        model: "qwen-small",
        choices: [{ index: 0, message: { role: "assistant", content: behaviour.label ?? "" }, finish_reason: "stop" }],
      });
      res.writeHead(behaviour.status ?? 200, { "content-type": "application/json", "x-gearbox-confidence": String(behaviour.confidence ?? 0.9) });
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    address,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe("the edge intent layer in a routing decision", () => {
  const closers: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of closers) await c();
  });
  // A vague message; `intent_min_confidence: 0.99` makes sure no built-in label counts.
  const VAGUE = "hmm so about that thing with the numbers from before";

  async function decide(agent: { label?: string; confidence?: number; status?: number; hang?: boolean }, extra = "") {
    const edge = await standIn(agent);
    closers.push(edge.close);
    const raw = parseConfigText(
      `providers:\n  - { name: openai, kind: openai, base_url: 'https://api.openai.com/v1', api_key_env: K }\n` +
        `edge:\n  agents: [{ address: '${edge.address}', models: [qwen-small] }]\n  default_model: qwen-small\n` +
        `route:\n  intent_min_confidence: 0.99\n  heuristic: { enable: false }\n  rules:\n    - { when: { intent: [code_gen] }, target: edge }\n  edge_intent: { enable: true, timeout_ms: 200${extra} }\n`,
      "t.yaml",
    );
    assert.ok(raw.ok, !raw.ok ? raw.errors.join() : "");
    const config = resolveConfig(raw.value, { K: "sk" }, "t.yaml");
    assert.ok(config.ok);
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: "info" }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
    const p = new RequestProcessor({ runtime: new Runtime(config.value), logger });
    p.requestHeaders({ ":method": "POST", ":path": "/v1/chat/completions", "content-type": "application/json" }, false);
    const started = performance.now();
    const pending = p.requestBody(Buffer.from(JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: VAGUE }] })));
    assert.ok(pending instanceof Promise, "asking the edge makes the phase asynchronous");
    const outcome: Outcome = await pending;
    const waited = performance.now() - started;
    assert.ok(outcome.kind === "continue");
    p.abort("test over");
    const log = lines.find((l) => l.msg === "request");
    return { upstream: outcome.mutation?.setHeaders?.["x-gearbox-upstream"], log, seen: edge.seen, waited };
  }

  test("a confident edge label drives the rules, and the log says where the intent came from", async () => {
    const r = await decide({ label: "code_gen", confidence: 0.91 });
    assert.equal(r.upstream, "edge", "rule 1 (code_gen → edge) matched on the edge's label");
    assert.equal(r.log?.edge_intent, "code_gen@0.910");
    assert.equal(r.log?.policy, "rule:1;edge_intent");
    assert.equal((r.seen[0] as { model: string }).model, "qwen-small");
  });

  test("a label under min_confidence is not used", async () => {
    const r = await decide({ label: "code_gen", confidence: 0.3 });
    assert.equal(r.upstream, "openai");
    assert.equal(r.log?.edge_intent, "low_confidence:code_gen@0.300");
  });

  test("an answer without a label, an error status or a hung agent leave the built-in intent", async () => {
    assert.equal((await decide({ label: "I think it is about numbers" })).log?.edge_intent, "no_label");
    assert.equal((await decide({ status: 503 })).log?.edge_intent, "edge_status:503");
    const hung = await decide({ hang: true });
    assert.equal(hung.upstream, "openai");
    assert.equal(hung.log?.edge_intent, "timeout");
  });
});
