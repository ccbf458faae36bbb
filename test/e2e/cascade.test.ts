/**
 * The confidence cascade end to end, with the REAL edge agent on the generated tiny model and a
 * cloud emulator: a weak edge answer is replaced by the cloud's before any byte reaches the
 * client; a strong one passes; a forced edge is never upgraded; an unreachable agent goes to the
 * cloud. Through the front door and through Envoy (harness) + ext_proc.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import { labellingRequest, parseIntentLabel } from "../../extproc/routing/intent/edge-classifier.ts";
import { loadJsonFixture } from "../emulators/fixtures.ts";
import { startOpenAIUpstream, type OpenAIUpstream } from "../emulators/openai-upstream.ts";
import { confidenceOn, startTinyEdgeAgent, type TinyEdgeAgent } from "../support/tiny-edge-agent.ts";
import { startEnvoy, type EnvoyHarness } from "../harness/envoy.ts";
import { shippedEdgeRoute, shippedEnvoySettings } from "../support/envoy-settings.ts";
import { startTestGateway, testConfig, type TestGateway } from "../support/gateway.ts";

const KEY = "sk-cloud-key";
const CLOUD_TEXT = (loadJsonFixture("vercel-ai/openai/openai-text") as { choices: { message: { content: string } }[] }).choices[0]?.message.content;
const ASK = { model: "tiny", messages: [{ role: "user" as const, content: "Classify: refund request" }], max_tokens: 8, temperature: 0 };

let agent: TinyEdgeAgent;
let cloud: OpenAIUpstream;
/** The tiny model's confidence on ASK, measured on the agent itself. */
let edgeConfidence: number;

before(async () => {
  agent = await startTinyEdgeAgent();
  cloud = await startOpenAIUpstream({ apiKey: KEY });
  edgeConfidence = await confidenceOn(agent, ASK);
});
after(async () => {
  await agent.close();
  await cloud.close();
});

function gatewayConfig(threshold: number, agentAddress = `127.0.0.1:${agent.port}`) {
  return testConfig(
    `providers:\n  - { name: openai, kind: openai, base_url: '${cloud.baseURL}', api_key_env: K }\n` +
      `edge:\n  agents: [{ address: '${agentAddress}', models: [tiny] }]\n  fallback_model: gpt-4.1-nano\n` +
      `route:\n  fallback: { enable: true, confidence_threshold: ${threshold} }\n`,
    { K: KEY },
  );
}

for (const transport of ["front door", "envoy + ext_proc"] as const) {
  describe(`cascade via ${transport}`, () => {
    const closers: (() => Promise<void>)[] = [];
    const gateways: TestGateway[] = [];
    const latestGateway = (): TestGateway => {
      const g = gateways.at(-1);
      assert.ok(g);
      return g;
    };
    after(async () => {
      for (const close of closers.reverse()) await close();
    });

    async function clientFor(threshold: number, agentAddress?: string): Promise<OpenAI> {
      const gateway: TestGateway = await startTestGateway(gatewayConfig(threshold, agentAddress));
      gateways.push(gateway);
      closers.push(() => gateway.close());
      let base = `http://127.0.0.1:${gateway.frontDoor.port}`;
      if (transport === "envoy + ext_proc") {
        const shipped = shippedEnvoySettings();
        const envoy: EnvoyHarness = await startEnvoy({
          extProc: { ...shipped.extProc, address: gateway.extProcAddress },
          routes: [{ header: "x-gearbox-upstream", value: "openai", cluster: "openai" }, shippedEdgeRoute().route],
          clusters: { openai: { url: cloud.url }, edge: shippedEdgeRoute().cluster },
        });
        closers.push(() => envoy.close());
        base = envoy.url;
      }
      return new OpenAI({ baseURL: `${base}/v1`, apiKey: "client", maxRetries: 0 });
    }

    test("a weak edge answer is upgraded: the client gets the cloud's, never the edge's; the log records the upgrade and its cost", async () => {
      const client = await clientFor(Math.min(0.999, edgeConfidence + 0.05));
      const seen = cloud.requests.length;
      const { data, response } = await client.chat.completions.create(ASK).withResponse();
      assert.equal(data.choices[0]?.message.content, CLOUD_TEXT);
      assert.equal(response.headers.get("x-gearbox-route"), "cloud");
      assert.match(response.headers.get("x-gearbox-fallback") ?? "", /^low_confidence:/);
      assert.equal((cloud.requests[seen]?.json as { model: string }).model, "gpt-4.1-nano");
      assert.equal(cloud.requests[seen]?.headers.authorization, `Bearer ${KEY}`);
      const line = latestGateway().logs.findLast((l) => l.msg === "request");
      const event = line?.cascade as Record<string, unknown> | undefined;
      assert.equal(event?.upgraded, true);
      assert.equal(Number(event?.edge_confidence).toFixed(4), edgeConfidence.toFixed(4));
      assert.ok(typeof event?.edge_latency_ms === "number" && typeof event.cloud_latency_ms === "number");
      assert.equal(event?.cloud_model, "gpt-4.1-nano");
      const usage = data.usage;
      assert.ok(usage, "the cloud's usage reaches the client");
      const expected = Math.round(((usage.prompt_tokens * 0.1 + usage.completion_tokens * 0.4) / 1e6) * 1e6) / 1e6;
      assert.equal(event?.cloud_cost_usd, expected, "the upgrade's cost at gpt-4.1-nano's list price");
      assert.equal(line?.cost_usd, expected);
    });

    test("a weak edge answer to a streaming client: the stream carries the cloud's answer", async () => {
      const client = await clientFor(Math.min(0.999, edgeConfidence + 0.05));
      const stream = await client.chat.completions.create({ ...ASK, stream: true });
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
      assert.equal(text, CLOUD_TEXT);
    });

    test("a confident edge answer stays on the edge (JSON and stream agree)", async () => {
      const client = await clientFor(Math.max(0.001, edgeConfidence - 0.05));
      const seen = cloud.requests.length;
      const { data, response } = await client.chat.completions.create(ASK).withResponse();
      assert.equal(response.headers.get("x-gearbox-route"), "edge");
      assert.equal(Number(response.headers.get("x-gearbox-confidence")).toFixed(4), edgeConfidence.toFixed(4));
      const stream = await client.chat.completions.create({ ...ASK, stream: true });
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
      assert.equal(text, data.choices[0]?.message.content);
      assert.equal(cloud.requests.length, seen, "the cloud was not called");
    });

    test("a forced edge (x-gearbox-route: edge) is never upgraded, however weak", async () => {
      const client = await clientFor(0.999);
      const seen = cloud.requests.length;
      const { response } = await client.chat.completions.create(ASK, { headers: { "x-gearbox-route": "edge" } }).withResponse();
      assert.equal(response.headers.get("x-gearbox-route"), "edge");
      assert.match(response.headers.get("x-gearbox-reason") ?? "", /^edge_forced/);
      assert.equal(cloud.requests.length, seen);
    });

    test("an unreachable edge agent: the cloud answers", async () => {
      const client = await clientFor(0.5, "127.0.0.1:9");
      const { data, response } = await client.chat.completions.create(ASK).withResponse();
      assert.equal(data.choices[0]?.message.content, CLOUD_TEXT);
      assert.match(response.headers.get("x-gearbox-fallback") ?? "", /^edge_status:5\d\d/);
      // The record says what the client got (the cloud's 200), not the edge's failure.
      const line = latestGateway().logs.findLast((l) => l.msg === "request");
      assert.equal(line?.status, 200);
      assert.equal(line?.route, "cloud");
      assert.match(String((line?.cascade as Record<string, unknown> | undefined)?.edge_status), /^5\d\d$/);
    });
  });
}

test("the edge intent layer asks the real edge agent; the gateway's use of its answer is what the answer says", async () => {
  // What the tiny model answers to the labelling prompt, asked directly (greedy: deterministic).
  const vague = [{ role: "user" as const, content: "hmm so about that thing with the numbers from before" }];
  const direct = await fetch(`http://127.0.0.1:${agent.port}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(labellingRequest(vague, "tiny")),
  });
  assert.equal(direct.status, 200);
  const answer = ((await direct.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content ?? "";
  const label = parseIntentLabel(answer);
  const confidence = Number(direct.headers.get("x-gearbox-confidence")).toFixed(3);

  const gateway = await startTestGateway(
    testConfig(
      `providers:\n  - { name: openai, kind: openai, base_url: '${cloud.baseURL}', api_key_env: K }\n` +
        `edge:\n  agents: [{ address: '127.0.0.1:${agent.port}', models: [tiny] }]\n  default_model: tiny\n` +
        `route:\n  intent_min_confidence: 0.99\n  fallback: { enable: true, confidence_threshold: 0.99 }\n  edge_intent: { enable: true, timeout_ms: 5000, min_confidence: 0 }\n`,
      { K: KEY },
    ),
  );
  try {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: "client", maxRetries: 0 });
    await client.chat.completions.create({ model: "gpt-4.1-nano", messages: vague, max_tokens: 8 });
    const line = gateway.logs.findLast((l) => l.msg === "request");
    assert.equal(line?.edge_intent, label === undefined ? "no_label" : `${label}@${confidence}`, `tiny model answered ${JSON.stringify(answer)}`);
  } finally {
    await gateway.close();
  }
});
