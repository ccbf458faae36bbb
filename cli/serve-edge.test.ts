/**
 * `gearbox serve` and its edge agents: the config's static `edge.agents` are routed to beside the
 * live registry (before this, serve's ext_proc followed the control plane alone and a forced edge
 * got 503 edge_unavailable), and `edge.local` runs an agent in the same process, registered with
 * the embedded control plane. Real tiny-model agents, a cloud emulator, the OpenAI SDK.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import type { AgentMetrics } from "../edge-agent/metrics.ts";
import { writeTinyGguf } from "../edge-agent/model/tiny-gguf.ts";
import { startOpenAIUpstream, type OpenAIUpstream } from "../test/emulators/openai-upstream.ts";
import { startTinyEdgeAgent, type TinyEdgeAgent } from "../test/support/tiny-edge-agent.ts";
import { serve, type Running } from "./serve.ts";

const KEY = "sk-serve-edge-test";
const SUMMARIZE = "Summarize in one line: the meeting moved to Tuesday.";
const CODE = "Write a Python function that parses a CSV file and returns the rows as dictionaries, with tests.";

let dir: string;
let cloud: OpenAIUpstream;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "serve-edge-"));
  cloud = await startOpenAIUpstream({ apiKey: KEY });
  process.env.SERVE_EDGE_TEST_KEY = KEY;
});
after(async () => {
  await cloud.close();
  await rm(dir, { recursive: true, force: true });
});

/** Writes a config (every port free, loopback) and starts `gearbox serve` in this process on it. */
async function serveWith(edgeYaml: string): Promise<{ running: Running; client: OpenAI }> {
  const file = path.join(dir, `gearbox-${Date.now()}.yaml`);
  await writeFile(
    file,
    `listen: { host: 127.0.0.1, extproc_port: 0, http_port: 0, admin_port: 0, metrics_port: 0, xds_port: 0 }\n` +
      `logging: { level: warn }\n` +
      `providers:\n  - { name: openai, kind: openai, base_url: '${cloud.baseURL}', api_key_env: SERVE_EDGE_TEST_KEY }\n` +
      `route:\n  rules:\n    - when: { intent: [summarize], estimated_complexity: low }\n      target: edge\n    - when: { intent: [code_gen] }\n      target: cloud\n  fallback: { enable: false }\n` +
      edgeYaml,
  );
  process.env.GEARBOX_CONFIG = file;
  const running = await serve("serve");
  assert.ok(running.frontDoor);
  return { running, client: new OpenAI({ baseURL: `http://127.0.0.1:${running.frontDoor.port}/v1`, apiKey: "client", maxRetries: 0 }) };
}

/** Chat answers an agent gave with 200 (its own request counter). */
async function answered(server: { metrics: AgentMetrics }): Promise<number> {
  const { values } = await server.metrics.requests.get();
  return values.filter((v) => v.labels.model === "tiny" && String(v.labels.status) === "200").reduce((sum, v) => sum + v.value, 0);
}

async function ask(client: OpenAI, content: string, model: string, route?: "edge") {
  const { data, response } = await client.chat.completions
    .create({ model, messages: [{ role: "user", content }], max_tokens: 8, temperature: 0 }, route ? { headers: { "x-gearbox-route": route } } : {})
    .withResponse();
  return { data, route: response.headers.get("x-gearbox-route"), reason: response.headers.get("x-gearbox-reason") };
}

describe("gearbox serve with static edge.agents (an agent started without the control plane)", () => {
  let agent: TinyEdgeAgent;
  let running: Running;
  let client: OpenAI;
  before(async () => {
    agent = await startTinyEdgeAgent();
    ({ running, client } = await serveWith(`edge:\n  agents: [{ address: '${agent.address}', models: [tiny] }]\n  default_model: tiny\n`));
  });
  after(async () => {
    await running.stop();
    await agent.close();
  });

  test("a forced edge is answered by the static agent, not refused with edge_unavailable", async () => {
    const served = await answered(agent.server);
    const seen = cloud.requests.length;
    const answer = await ask(client, "Hello there", "gpt-4o-mini", "edge");
    assert.equal(answer.route, "edge");
    assert.equal(answer.data.model, "tiny");
    assert.equal(cloud.requests.length, seen, "the cloud was not called");
    assert.equal(await answered(agent.server), served + 1, "the static agent answered it");
  });

  test("auto mode: the policy sends a short summary to the static agent and code to the cloud", async () => {
    const summary = await ask(client, SUMMARIZE, "gpt-4o-mini");
    assert.equal(summary.route, "edge");
    assert.match(summary.reason ?? "", /rule/);
    const seen = cloud.requests.length;
    const code = await ask(client, CODE, "gpt-4o-mini");
    assert.equal(code.route, "cloud");
    assert.equal(cloud.requests.length, seen + 1);
  });
});

describe("gearbox serve with edge.local (an agent in the same process)", () => {
  let running: Running;
  let client: OpenAI;
  before(async () => {
    const model = path.join(dir, "tiny.gguf");
    await writeTinyGguf(model);
    ({ running, client } = await serveWith(`edge:\n  local: { model: '${model}', port: 0, threads: 1, context_length: 512 }\n  default_model: tiny\n`));
  });
  after(async () => {
    await running.stop();
  });

  test("the agent registers with the embedded control plane and answers forced and policy-routed edge calls", async () => {
    const local = running.localEdge;
    assert.ok(local, "serve started the in-process agent");
    assert.equal(local.modelId, "tiny");
    const registered = running.controlPlane?.plane.registry.agents().map((a) => a.address);
    assert.deepEqual(registered, [local.address], "registered like any agent");
    const forced = await ask(client, "Hello there", "gpt-4o-mini", "edge");
    assert.equal(forced.route, "edge");
    assert.equal(forced.data.model, "tiny");
    const summary = await ask(client, SUMMARIZE, "gpt-4o-mini");
    assert.equal(summary.route, "edge");
    assert.equal(await answered(local.server), 2, "both answered by the in-process agent");
  });
});
