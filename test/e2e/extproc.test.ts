/**
 * The conformance suite through Envoy — played by the harness with the ext_proc settings of
 * `envoy/local-dev.yaml` — with Gearbox as its ext_proc service; plus what only Envoy shows.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startOpenAIUpstream } from "../emulators/openai-upstream.ts";
import { startEnvoy, type EnvoyHarness } from "../harness/envoy.ts";
import { shippedEnvoySettings } from "../support/envoy-settings.ts";
import { eventually } from "../support/eventually.ts";
import { brokenTelemetry } from "../support/broken-telemetry.ts";
import { openAIProviderYaml, startTestGateway, testConfig, type TestGateway } from "../support/gateway.ts";
import { MAX_REQUEST_BYTES, openAIConformance, PROVIDER_KEY } from "./openai-conformance.ts";

const limits = `limits:\n  max_request_bytes: ${MAX_REQUEST_BYTES}\n`;

async function envoyInFront(gateway: TestGateway, upstreamBaseURL: string): Promise<EnvoyHarness> {
  const shipped = shippedEnvoySettings();
  return startEnvoy({
    extProc: { ...shipped.extProc, address: gateway.extProcAddress },
    // As in the shipped config: Gearbox's x-gearbox-upstream picks the cluster.
    routes: [{ header: "x-gearbox-upstream", value: "openai", cluster: "openai" }],
    // Paths Gearbox does not handle pass through to the provider untouched.
    defaultCluster: "openai",
    clusters: { openai: { url: new URL(upstreamBaseURL).origin } },
    // Envoy's buffer must hold what Gearbox accepts, so Gearbox (not Envoy) answers 413.
    bufferLimitBytes: Math.max(shipped.bufferLimitBytes ?? 0, 4 * MAX_REQUEST_BYTES),
  });
}

openAIConformance("Envoy (harness) with Gearbox as ext_proc", async (upstreamBaseURL) => {
  const gateway = await startTestGateway(testConfig(openAIProviderYaml(upstreamBaseURL, limits), { TEST_PROVIDER_KEY: PROVIDER_KEY }));
  const envoy = await envoyInFront(gateway, upstreamBaseURL);
  return {
    baseURL: `${envoy.url}/v1`,
    close: async () => {
      await envoy.close();
      await gateway.close();
    },
  };
});

test("ext_proc: mutations Envoy would refuse are never needed, and streams switch to STREAMED", async () => {
  const upstream = await startOpenAIUpstream({ apiKey: PROVIDER_KEY });
  const gateway = await startTestGateway(testConfig(openAIProviderYaml(upstream.baseURL), { TEST_PROVIDER_KEY: PROVIDER_KEY }));
  const envoy = await envoyInFront(gateway, upstream.baseURL);
  try {
    const client = new OpenAI({ baseURL: `${envoy.url}/v1`, apiKey: "app", maxRetries: 0 });
    await client.chat.completions.create({ model: "gpt-4.1-nano", messages: [{ role: "user", content: "x" }] });
    const stream = await client.chat.completions.create({ model: "gpt-4.1-nano", messages: [{ role: "user", content: "x" }], stream: true });
    for await (const _ of stream) {
      // drain
    }
    assert.deepEqual(envoy.stats.ignoredMutations, [], "Gearbox never asks Envoy for a mutation Envoy ignores");
    assert.deepEqual(envoy.stats.contentLengthMismatches, []);
    assert.equal(envoy.stats.spuriousMessages, 0);
    assert.equal(envoy.stats.modeOverrides, 1, "only the event stream switched to STREAMED");
    assert.equal(envoy.stats.ignoredModeOverrides, 0);
    assert.equal(envoy.stats.streamErrors, 0);
    assert.equal(envoy.stats.timeouts, 0);
    assert.equal(envoy.stats.upstreamRequests.openai, 2);
  } finally {
    await envoy.close();
    await gateway.close();
    await upstream.close();
  }
});

test("ext_proc: a path Gearbox does not handle reaches the upstream byte for byte, caller's auth kept", async () => {
  const upstream = await startOpenAIUpstream();
  const gateway = await startTestGateway(testConfig(openAIProviderYaml(upstream.baseURL), { TEST_PROVIDER_KEY: PROVIDER_KEY }));
  const envoy = await envoyInFront(gateway, upstream.baseURL);
  try {
    const body = Buffer.from("purpose=fine-tune&file=@data.jsonl");
    await fetch(`${envoy.url}/v1/files?limit=2`, { method: "POST", headers: { "content-type": "text/plain", authorization: "Bearer caller-own" }, body });
    const received = upstream.requests.at(-1);
    assert.equal(received?.url, "/v1/files?limit=2");
    assert.equal(received?.headers.authorization, "Bearer caller-own");
    assert.deepEqual(received?.body, body);
  } finally {
    await envoy.close();
    await gateway.close();
    await upstream.close();
  }
});

test("ext_proc: the translated answer goes out before its record is made, so a failing record costs the caller nothing", async () => {
  const upstream = await startOpenAIUpstream({ apiKey: PROVIDER_KEY });
  const sink = brokenTelemetry();
  const gateway = await startTestGateway(testConfig(openAIProviderYaml(upstream.baseURL), { TEST_PROVIDER_KEY: PROVIDER_KEY }), { telemetry: sink.telemetry });
  const envoy = await envoyInFront(gateway, upstream.baseURL);
  try {
    // An Anthropic client on an OpenAI backend: only Gearbox's last answer makes the body Anthropic's.
    const client = new Anthropic({ baseURL: envoy.url, apiKey: "app", maxRetries: 0 });
    const message = await client.messages.create({ model: "gpt-4.1-nano", max_tokens: 64, messages: [{ role: "user", content: "Hi" }] });
    assert.equal(message.type, "message");
    assert.ok(message.content.some((block) => block.type === "text" && block.text.length > 0));
    const stream = client.messages.stream({ model: "gpt-4.1-nano", max_tokens: 64, messages: [{ role: "user", content: "Hi again" }] });
    const final = await stream.finalMessage();
    assert.equal(final.type, "message");
    await eventually(() => sink.handed === 2, "both requests handed to telemetry");
    assert.equal(gateway.logs.filter((l) => l.msg === "request record failed").length, 2);
    assert.equal(envoy.stats.streamErrors, 0);
  } finally {
    await envoy.close();
    await gateway.close();
    await upstream.close();
  }
});
