/**
 * What `x-gearbox-route` does, as one table over
 * `route.allow_client_route` × the header × the policy's target × the edge agents, driving the
 * real `RequestProcessor` (ext_proc phases) and reading what the client and Envoy get: where the
 * call goes, the refusal's status and code, the `x-gearbox-reason` the client sees and, for an
 * edge call, whether a weak answer may still be upgraded to the cloud.
 *
 * The rules the table spells out:
 * - a header value outside auto|edge|cloud is refused (400 `invalid_route_hint`) whatever the policy;
 * - with `allow_client_route: false` a valid header is ignored everywhere: the call is `auto`;
 * - `cloud` (allowed) goes to the cloud, reason `client_hint_cloud;…`, whatever the policy and agents;
 * - `edge` (allowed) stays on the edge with no upgrade, or is refused (503 `edge_unavailable`)
 *   when no agent can take it, never sent to a cloud;
 * - `auto` follows the policy; an edge decision no agent can take goes to the cloud and says
 *   `edge_unavailable;<the policy's reason>`.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseConfigText, resolveConfig, type GatewayConfig } from "../config/load.ts";
import { EdgeAgents, LiveEdgeAgents, type EdgeDirectory } from "../edge/agents.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import { RequestProcessor } from "../processor/processor.ts";
import type { Outcome } from "../processor/outcome.ts";
import { clientRoute, parseRouteHeader } from "./route-header.ts";
import { Runtime } from "../runtime/runtime.ts";
import { BRIEF_ROUTE_RULES } from "../../test/support/brief-route.ts";

/** The brief's rules; the cloud at a closed local port, so an upgrade attempt fails fast and offline. */
const CONFIG = `
providers:
  - { name: openai, kind: openai, base_url: 'http://127.0.0.1:9/v1', api_key_env: K }
edge:
  agents: [{ address: '10.0.0.7:8088', models: [qwen-small] }]
  default_model: qwen-small
route:
  allow_client_route: ALLOW
${BRIEF_ROUTE_RULES}`;

function load(allow: boolean): GatewayConfig {
  const raw = parseConfigText(CONFIG.replace("ALLOW", String(allow)), "route-header.yaml");
  assert.ok(raw.ok, raw.ok ? "" : raw.errors.join());
  const config = resolveConfig(raw.value, { K: "sk-test" }, "route-header.yaml");
  assert.ok(config.ok, config.ok ? "" : config.errors.join());
  return config.value;
}

const CONFIGS = { true: load(true), false: load(false) };

/** Policy target by content: rule 1 (summarize, low) → edge; rule 2 (code_gen) → cloud. */
const PROMPTS = {
  edge: "Summarize this in one line: the meeting moved to Friday because the room was booked.",
  cloud: "Write a Python function that parses ISO dates and handles time zones.",
} as const;

type AgentState = "healthy" | "none" | "saturated";

function directory(state: AgentState): EdgeDirectory {
  switch (state) {
    case "healthy":
      return new EdgeAgents({ agents: [{ address: "10.0.0.7:8088", models: ["qwen-small"] }] } as ConstructorParameters<typeof EdgeAgents>[0]);
    case "none":
      return new LiveEdgeAgents([]);
    case "saturated":
      // Agents serve the model but none takes a call at pick time (all busy, or the set changed
      // between the directory's `serves` and its `pick`).
      return { serves: (model) => model === "qwen-small", pick: () => undefined };
    default:
      return state satisfies never;
  }
}

type Header = "absent" | "auto" | "edge" | "cloud" | "invalid";
const HEADER_VALUE: Record<Header, string | undefined> = { absent: undefined, auto: "auto", edge: "Edge", cloud: "cloud", invalid: "fast" };

type Expected = { route: "edge"; upgrade: boolean; reason: string } | { route: "cloud"; reason: string } | { status: number; code: string };

interface Row {
  allow: boolean;
  header: Header;
  policy: keyof typeof PROMPTS;
  agents: AgentState;
  expect: Expected;
}

/** What a call with nothing forced gets: the policy's choice, the edge only when an agent takes it. */
function policyOutcome(policy: keyof typeof PROMPTS, agents: AgentState): Expected {
  if (policy === "cloud") return { route: "cloud", reason: agents === "none" ? "default_provider:openai" : "rule:2;default_provider:openai" };
  switch (agents) {
    case "healthy":
      return { route: "edge", upgrade: true, reason: "rule:1" };
    case "none":
      // No agent serves the edge model: the policy is not consulted.
      return { route: "cloud", reason: "default_provider:openai" };
    case "saturated":
      return { route: "cloud", reason: "edge_unavailable;rule:1;default_provider:openai" };
    default:
      return agents satisfies never;
  }
}

function expected(allow: boolean, header: Header, policy: keyof typeof PROMPTS, agents: AgentState): Expected {
  if (header === "invalid") return { status: 400, code: "invalid_route_hint" };
  if (!allow || header === "absent" || header === "auto") return policyOutcome(policy, agents);
  if (header === "cloud") return { route: "cloud", reason: "client_hint_cloud;default_provider:openai" };
  return agents === "healthy" ? { route: "edge", upgrade: false, reason: "client_hint:edge" } : { status: 503, code: "edge_unavailable" };
}

const ROWS: Row[] = [];
for (const allow of [true, false])
  for (const header of ["absent", "auto", "edge", "cloud", "invalid"] as const)
    for (const policy of ["edge", "cloud"] as const)
      for (const agents of ["healthy", "none", "saturated"] as const)
        ROWS.push({ allow, header, policy, agents, expect: expected(allow, header, policy, agents) });

function json(body: Buffer | undefined): { error?: { code?: string } } {
  return JSON.parse(body?.toString() ?? "{}") as { error?: { code?: string } };
}

/** One call through the processor; an edge call is answered with a weak (0.1) score to see whether it is upgraded. */
async function run(row: Row): Promise<Expected> {
  const p = new RequestProcessor({
    runtime: new Runtime(CONFIGS[String(row.allow) as "true" | "false"], { edgeAgents: directory(row.agents) }),
    logger: silentLogger(),
  });
  const value = HEADER_VALUE[row.header];
  p.requestHeaders(
    { ":method": "POST", ":path": "/v1/chat/completions", "content-type": "application/json", ...(value !== undefined && { "x-gearbox-route": value }) },
    false,
  );
  const sent = await p.requestBody(Buffer.from(JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: PROMPTS[row.policy] }] })));
  if (sent.kind === "respond") return { status: sent.response.status, code: json(sent.response.body).error?.code ?? "" };
  const upstream = sent.mutation?.setHeaders?.["x-gearbox-upstream"];
  if (upstream === "openai") {
    const answered = p.responseHeaders({ ":status": "200", "content-type": "application/json" }, false);
    assert.equal(answered.kind, "continue");
    const reason = answered.kind === "continue" ? (answered.mutation?.setHeaders?.["x-gearbox-reason"] ?? "") : "";
    assert.equal(answered.kind === "continue" && answered.mutation?.setHeaders?.["x-gearbox-route"], "cloud");
    return { route: "cloud", reason };
  }
  assert.equal(upstream, "edge", `an edge or a cloud upstream, got ${upstream}`);
  assert.equal(sent.mutation?.edgeEndpoint, "10.0.0.7:8088");
  p.responseHeaders({ ":status": "200", "content-type": "application/json", "x-gearbox-confidence": "0.1" }, false);
  const completion = {
    id: "e",
    object: "chat.completion",
    created: 1,
    model: "qwen-small",
    choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  };
  const verdict: Outcome = await p.responseBody(Buffer.from(JSON.stringify(completion)), true);
  const headers = verdict.kind === "continue" ? (verdict.mutation?.setHeaders ?? {}) : verdict.response.headers;
  const reason = headers["x-gearbox-reason"] ?? "";
  // A weak answer is kept (`edge_forced`) only when no upgrade is allowed; else the cloud is tried.
  const upgrade = !reason.startsWith("edge_forced:");
  return { route: "edge", upgrade, reason: reason.replace(/^(edge_forced:confidence=0\.1|upgrade(?:_failed)?:low_confidence:0\.1<0\.6);/, "") };
}

function label(row: Row): string {
  return `allow_client_route=${row.allow} header=${row.header} policy=${row.policy} agents=${row.agents}`;
}

describe("x-gearbox-route: allow_client_route × header × policy target × edge agents", () => {
  for (const row of ROWS) {
    test(label(row), async () => {
      const got = await run(row);
      if ("reason" in row.expect && "reason" in got) {
        // The reason the client sees starts with the decision's reason (a fallback may append to it).
        assert.ok(got.reason.startsWith(row.expect.reason), `reason '${got.reason}' should start with '${row.expect.reason}'`);
        assert.deepEqual({ ...got, reason: row.expect.reason }, row.expect);
      } else {
        assert.deepEqual(got, row.expect);
      }
    });
  }
});

describe("the one route-header parser", () => {
  test("absent or empty is auto; case and spaces do not matter; anything else is a 400", () => {
    assert.deepEqual(parseRouteHeader(undefined), { ok: true, value: "auto" });
    assert.deepEqual(parseRouteHeader(""), { ok: true, value: "auto" });
    assert.deepEqual(parseRouteHeader(" EDGE "), { ok: true, value: "edge" });
    const bad = parseRouteHeader("edge,cloud");
    assert.ok(!bad.ok);
    assert.equal(bad.errors[0]?.status, 400);
    assert.equal(bad.errors[0]?.code, "invalid_route_hint");
  });

  test("the policy's allow_client_route turns a valid header into auto, never an invalid one into a pass", () => {
    assert.deepEqual(clientRoute("cloud", false), { ok: true, value: "auto" });
    assert.deepEqual(clientRoute("cloud", true), { ok: true, value: "cloud" });
    assert.equal(clientRoute("fast", false).ok, false);
  });
});
