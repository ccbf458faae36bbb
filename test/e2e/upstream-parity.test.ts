/**
 * The front door plays Envoy's part: what a provider or an edge agent receives must not depend
 * on which of the two carried the call. The same SDK call goes through the front door and
 * through Envoy (the harness, with the shipped sidecar's routes and router settings) in front of
 * ext_proc, and the two requests the upstream receives are compared: the same header names and
 * values, the same body bytes. Envoy's connection manager adds two headers of its own to every
 * request (`x-forwarded-proto`, `x-request-id`: `ConnectionManagerUtility::mutateRequestHeaders`)
 * and rewrites `host` to the cluster's; those are the only differences allowed. The client's side
 * is held the same way: status, content type and Gearbox's own response headers.
 */
import assert from "node:assert/strict";
import type { IncomingHttpHeaders } from "node:http";
import { after, before, describe, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startOpenAIUpstream, type OpenAIUpstream } from "../emulators/openai-upstream.ts";
import type { RecordedRequest } from "../emulators/emulator-base.ts";
import { startEnvoy, type EnvoyHarness } from "../harness/envoy.ts";
import { shippedEdgeRoute, shippedEnvoySettings, shippedProviderRoute } from "../support/envoy-settings.ts";
import { openAIProviderYaml, startTestGateway, testConfig, type TestGateway } from "../support/gateway.ts";

/** Added by Envoy's connection manager to every request; `host` is the cluster's in both. */
const ENVOY_OWN = new Set(["x-forwarded-proto", "x-request-id", "host"]);
/** Gearbox's id of the request: present either way, a new one per request. */
const PER_REQUEST = "x-gearbox-request-id";

/** The headers an upstream received, as the comparison sees them: sorted, Envoy's own left out, the request id as its shape. */
function comparable(headers: IncomingHttpHeaders): [string, string][] {
  return Object.entries(headers)
    .filter(([name]) => !ENVOY_OWN.has(name))
    .map(([name, value]): [string, string] => {
      const text = Array.isArray(value) ? value.join(", ") : String(value);
      return [name, name === PER_REQUEST ? text.replace(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, "<uuid>") : text];
    })
    .sort(([a], [b]) => a.localeCompare(b));
}

describe("what an upstream receives is the same through the front door and through Envoy + ext_proc", () => {
  let cloud: OpenAIUpstream;
  let agent: OpenAIUpstream;
  let gateway: TestGateway;
  let envoy: EnvoyHarness;

  before(async () => {
    cloud = await startOpenAIUpstream({ apiKey: "sk-parity" });
    agent = await startOpenAIUpstream();
    const edge = `edge:\n  agents: [{ address: '127.0.0.1:${agent.port}', models: [tiny] }]\n  default_model: tiny\n`;
    gateway = await startTestGateway(testConfig(edge + openAIProviderYaml(cloud.baseURL), { TEST_PROVIDER_KEY: "sk-parity" }));
    const shipped = shippedEnvoySettings("sidecar.yaml");
    const edgeRoute = shippedEdgeRoute("sidecar.yaml");
    envoy = await startEnvoy({
      extProc: { ...shipped.extProc, address: gateway.extProcAddress },
      suppressEnvoyHeaders: shipped.suppressEnvoyHeaders,
      routes: [shippedProviderRoute("sidecar.yaml", "openai"), edgeRoute.route],
      clusters: { openai: { url: new URL(cloud.baseURL).origin }, edge: edgeRoute.cluster },
    });
  });
  after(async () => {
    await envoy.close();
    await gateway.close();
    await agent.close();
    await cloud.close();
  });

  /**
   * Runs `call` against the front door, then through Envoy; returns what `upstream` received each
   * time. The answers the client got must agree too: the same status and content type, and the
   * same Gearbox headers (`x-gearbox-*`; the request id's value differs).
   */
  async function both(upstream: OpenAIUpstream, call: (base: string) => Promise<Response>): Promise<[RecordedRequest, RecordedRequest]> {
    const seen: RecordedRequest[] = [];
    const answers: [number, string | null, string[]][] = [];
    for (const base of [gateway.baseURL.replace("/v1", ""), envoy.url]) {
      const before = upstream.requests.length;
      const response = await call(base);
      assert.equal(upstream.requests.length, before + 1, `one request upstream through ${base}`);
      seen.push(upstream.requests.at(-1) as RecordedRequest);
      const gearbox = [...response.headers]
        .filter(([name]) => name.startsWith("x-gearbox-"))
        .map(([name, value]) => (name === PER_REQUEST ? name : `${name}: ${value}`));
      answers.push([response.status, response.headers.get("content-type"), gearbox.sort()]);
      if (!response.bodyUsed) await response.arrayBuffer();
    }
    assert.deepEqual(answers[0], answers[1], "the client's answer");
    assert.ok(
      answers[0]?.[2].some((h) => h.startsWith("x-gearbox-route: ")),
      "Gearbox's own headers are compared",
    );
    return seen as [RecordedRequest, RecordedRequest];
  }

  function assertSame([frontDoor, throughEnvoy]: [RecordedRequest, RecordedRequest]): void {
    assert.equal(frontDoor.url, throughEnvoy.url);
    assert.deepEqual(comparable(frontDoor.headers), comparable(throughEnvoy.headers));
    assert.equal(frontDoor.body.toString(), throughEnvoy.body.toString());
    for (const request of [frontDoor, throughEnvoy]) {
      assert.equal(request.headers["x-gearbox-upstream"], undefined, "routing headers stay between Gearbox and its proxy");
      assert.equal(request.headers["x-gearbox-edge-endpoint"], undefined);
    }
  }

  const ask = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "Say hi" }] };
  const clientHeaders = { "x-app-trace": "trace-7", "x-gearbox-route": "cloud" };

  test("an OpenAI SDK call to an OpenAI provider", async () => {
    const seen = await both(cloud, (base) =>
      new OpenAI({ baseURL: `${base}/v1`, apiKey: "app", maxRetries: 0 }).chat.completions.create(ask, { headers: clientHeaders }).asResponse(),
    );
    assertSame(seen);
    assert.equal(seen[0].headers.authorization, "Bearer sk-parity");
  });

  test("an OpenAI SDK stream to an OpenAI provider", async () => {
    const seen = await both(cloud, async (base) => {
      const { data: stream, response } = await new OpenAI({ baseURL: `${base}/v1`, apiKey: "app", maxRetries: 0 }).chat.completions
        .create({ ...ask, stream: true }, { headers: clientHeaders })
        .withResponse();
      for await (const chunk of stream) void chunk;
      return response;
    });
    assertSame(seen);
  });

  test("an Anthropic SDK call translated for an OpenAI provider", async () => {
    const seen = await both(cloud, (base) =>
      new Anthropic({ baseURL: base, apiKey: "app", maxRetries: 0 }).messages
        .create({ model: "gpt-4o-mini", max_tokens: 16, messages: [{ role: "user", content: "Say hi" }] }, { headers: clientHeaders })
        .asResponse(),
    );
    assertSame(seen);
  });

  test("an OpenAI SDK call Gearbox sends to an edge agent", async () => {
    const seen = await both(agent, (base) =>
      new OpenAI({ baseURL: `${base}/v1`, apiKey: "app", maxRetries: 0 }).chat.completions
        .create(ask, {
          headers: { "x-app-trace": "trace-8", "x-gearbox-route": "edge" },
        })
        .asResponse(),
    );
    assertSame(seen);
  });
});
