import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { pino } from "pino";
import { parseConfigText, resolveConfig } from "../config/load.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import { createPlugin } from "../routing/policy/index.ts";
import { CloudSpend } from "../routing/signals.ts";
import { RequestProcessor } from "./processor.ts";
import { createRoutingState } from "../runtime/routing-state.ts";
import type { Outcome } from "./outcome.ts";
import { Runtime } from "../runtime/runtime.ts";

/** Phases without plugins or a cloud upgrade answer synchronously. */
function sync(outcome: Outcome | Promise<Outcome>): Outcome {
  assert.ok(!(outcome instanceof Promise), "expected a synchronous outcome");
  return outcome;
}

/** The brief's route block verbatim, an edge agent, and a cloud provider. */
const CONFIG = `
providers:
  - { name: openai, kind: openai, base_url: 'https://api.openai.com/v1', api_key_env: K }
edge:
  agents: [{ address: '10.0.0.7:8088', models: [qwen-small] }]
  default_model: qwen-small
route:
  rules:
    - when:
        intent: [summarize, intent_classify, extract_entity]
        estimated_complexity: low
      target: edge
    - when:
        intent: [code_gen, multi_hop_reasoning, math]
      target: cloud
  fallback:
    enable: true
    confidence_threshold: 0.6
    upgrade_target: cloud
`;

function decide(content: string, headers: Record<string, string> = {}, extra: Record<string, unknown> = {}) {
  const raw = parseConfigText(CONFIG, "brief.yaml");
  assert.ok(raw.ok, !raw.ok ? raw.errors.join() : "");
  const config = resolveConfig(raw.value, { K: "sk" }, "brief.yaml");
  assert.ok(config.ok);
  const p = new RequestProcessor({ runtime: new Runtime(config.value), logger: silentLogger() });
  p.requestHeaders({ ":method": "POST", ":path": "/v1/chat/completions", "content-type": "application/json", ...headers }, false);
  const outcome = sync(p.requestBody(Buffer.from(JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content }], ...extra }))));
  assert.equal(outcome.kind, "continue");
  return outcome.kind === "continue" ? outcome.mutation : undefined;
}

function route(content: string, headers: Record<string, string> = {}, extra: Record<string, unknown> = {}) {
  return decide(content, headers, extra)?.setHeaders ?? {};
}

test("the brief's config: a short summary goes to the edge agent", () => {
  const m = decide("Summarize this in one line: the meeting moved to Friday because the room was booked.");
  assert.equal(m?.setHeaders?.["x-gearbox-upstream"], "edge");
  // The agent travels as dynamic metadata through Envoy, never as a header a caller could forge.
  assert.equal(m?.edgeEndpoint, "10.0.0.7:8088");
  assert.equal(m?.setHeaders?.["x-gearbox-edge-endpoint"], undefined);
});

test("the brief's config: code generation and math go to the cloud", () => {
  assert.equal(route("Write a Python function that parses ISO dates and handles time zones.")["x-gearbox-upstream"], "openai");
  assert.equal(route("Solve for x: 3x^2 + 2x - 5 = 0, and prove your answer.")["x-gearbox-upstream"], "openai");
});

test("tools go to the cloud even for an edge-shaped request; the client can force the cloud", () => {
  const tools = [{ type: "function", function: { name: "lookup" } }];
  assert.equal(route("Summarize: the meeting moved to Friday.", {}, { tools })["x-gearbox-upstream"], "openai");
  assert.equal(route("Summarize: the meeting moved to Friday.", { "x-gearbox-route": "cloud" })["x-gearbox-upstream"], "openai");
});

test("allow_client_route: false → a client's x-gearbox-route is ignored", () => {
  const raw = parseConfigText(CONFIG.replace("route:\n", "route:\n  allow_client_route: false\n"), "brief.yaml");
  assert.ok(raw.ok, !raw.ok ? raw.errors.join() : "");
  const config = resolveConfig(raw.value, { K: "sk" }, "brief.yaml");
  assert.ok(config.ok);
  const p = new RequestProcessor({ runtime: new Runtime(config.value), logger: silentLogger() });
  p.requestHeaders({ ":method": "POST", ":path": "/v1/chat/completions", "content-type": "application/json", "x-gearbox-route": "cloud" }, false);
  const outcome = sync(
    p.requestBody(
      Buffer.from(JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: "Summarize in one line: the meeting moved to Friday." }] })),
    ),
  );
  assert.ok(outcome.kind === "continue");
  assert.equal(outcome.mutation?.setHeaders?.["x-gearbox-upstream"], "edge", "the policy decided, not the client");
});

test("a policy plugin decides (asynchronously); a failing one leaves the built-in decision", async () => {
  const raw = parseConfigText(CONFIG, "brief.yaml");
  assert.ok(raw.ok);
  const config = resolveConfig(raw.value, { K: "sk" }, "brief.yaml");
  assert.ok(config.ok);
  const run = async (plugin: ReturnType<typeof createPlugin>, content: string) => {
    const p = new RequestProcessor({ runtime: new Runtime(config.value, { plugins: [plugin] }), logger: silentLogger() });
    p.requestHeaders({ ":method": "POST", ":path": "/v1/chat/completions", "content-type": "application/json" }, false);
    const pending = p.requestBody(Buffer.from(JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content }] })));
    assert.ok(pending instanceof Promise, "plugins make the phase asynchronous");
    const outcome = await pending;
    assert.ok(outcome.kind === "continue");
    return outcome.mutation?.setHeaders?.["x-gearbox-upstream"];
  };
  const code = "Write a Python function that parses ISO dates.";
  assert.equal(
    await run(
      createPlugin("pin-edge", () => ({ target: "edge", reason: "tenant_on_prem" })),
      code,
    ),
    "edge",
  );
  assert.equal(
    await run(
      createPlugin("broken", () => {
        throw new Error("boom");
      }),
      code,
    ),
    "openai",
  );
  assert.equal(
    await run(
      createPlugin("slow", () => new Promise((r) => setTimeout(() => r({ target: "edge", reason: "late" }), 50)), 5),
      code,
    ),
    "openai",
  );
});

describe("the dynamic layer's budget input: the cloud spend this replica recorded", () => {
  const BUDGET = CONFIG.replace(
    "route:\n",
    "route:\n  dynamic:\n    monthly_cloud_budget_usd: 0.01\n    budget_steps: [{ spent_above: 0.6, threshold: 0.95 }]\n",
  ).replace("api_key_env: K }", "api_key_env: K, pricing: { gpt-4o: { input: 2.5, output: 10 } } }");
  const load = () => {
    const raw = parseConfigText(BUDGET, "brief.yaml");
    assert.ok(raw.ok, !raw.ok ? raw.errors.join() : "");
    const config = resolveConfig(raw.value, { K: "sk" }, "brief.yaml");
    assert.ok(config.ok, !config.ok ? config.errors.join() : "");
    return config.value;
  };
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  /** A chat call through the processor; a cloud call is answered with `usage`. */
  function call(config: ReturnType<typeof load>, spend: CloudSpend, content: string, usage?: { prompt_tokens: number; completion_tokens: number }) {
    const p = new RequestProcessor({ runtime: new Runtime(config, { state: createRoutingState({ cloudSpend: spend }) }), logger });
    p.requestHeaders({ ":method": "POST", ":path": "/v1/chat/completions", "content-type": "application/json" }, false);
    const out = sync(p.requestBody(Buffer.from(JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content }] }))));
    assert.ok(out.kind === "continue");
    const headers = out.mutation?.setHeaders ?? {};
    if (usage && headers["x-gearbox-upstream"] === "openai") {
      p.responseHeaders({ ":status": "200", "content-type": "application/json" }, false);
      const completion = {
        id: "c",
        object: "chat.completion",
        created: 1,
        model: "gpt-4o",
        choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
        usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
      };
      sync(p.responseBody(Buffer.from(JSON.stringify(completion)), true));
    }
    return headers;
  }
  // Intent qa, complexity about 0.8 (proof + why + explain): over the base 0.7, under 0.95.
  const HARDISH = "Prove that there are infinitely many primes and explain why the proof works.";

  test("the request log carries what a cloud call cost, and the spend adds it up", () => {
    const spend = new CloudSpend();
    const headers = call(load(), spend, "Write a Python function that parses ISO dates.", { prompt_tokens: 1000, completion_tokens: 200 });
    assert.equal(headers["x-gearbox-upstream"], "openai");
    const expected = (1000 * 2.5 + 200 * 10) / 1e6;
    assert.equal(spend.spentUsd(), expected);
    const line = lines.findLast((l) => l.msg === "request");
    assert.equal(line?.cost_usd, expected);
  });

  test("past 60 % of the monthly budget the cloud threshold rises to 0.95 and the reason says so", () => {
    const config = load();
    const spend = new CloudSpend();
    const before = call(config, spend, HARDISH);
    assert.equal(before["x-gearbox-upstream"], "openai", `under budget: ${before["x-gearbox-reason"]}`);
    // Two code requests answered by the cloud: 2 × 0.0045 USD of a 0.01 budget = 90 %.
    for (let i = 0; i < 2; i++) call(config, spend, "Write a Python function that parses ISO dates.", { prompt_tokens: 1000, completion_tokens: 200 });
    assert.ok(spend.fraction(0.01) > 0.6);
    const p = new RequestProcessor({ runtime: new Runtime(config, { state: createRoutingState({ cloudSpend: spend }) }), logger });
    p.requestHeaders({ ":method": "POST", ":path": "/v1/chat/completions", "content-type": "application/json" }, false);
    const out = sync(p.requestBody(Buffer.from(JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: HARDISH }] }))));
    assert.ok(out.kind === "continue");
    assert.equal(out.mutation?.setHeaders?.["x-gearbox-upstream"], "edge");
    // A confident edge answer: the client sees why the request stayed on the edge.
    p.responseHeaders({ ":status": "200", "content-type": "application/json", "x-gearbox-confidence": "0.9" }, false);
    const answer = sync(
      p.responseBody(
        Buffer.from(
          JSON.stringify({
            id: "e",
            object: "chat.completion",
            created: 1,
            model: "qwen-small",
            choices: [{ index: 0, message: { role: "assistant", content: "…" }, finish_reason: "stop" }],
          }),
        ),
        true,
      ),
    );
    assert.ok(answer.kind === "continue");
    assert.match(answer.mutation?.setHeaders?.["x-gearbox-reason"] ?? "", /dynamic:budget_spent>0\.6;complexity=0\.\d+<0\.95/);
  });
});
