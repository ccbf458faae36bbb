/**
 * Who is calling, from Envoy to Gearbox: each shipped Envoy config (played by the harness) sends
 * the caller's attributes with the request headers, and Gearbox's decoding of them
 * (`clientIdentityOf`, which the ext_proc server hands to the processor) finds the caller's IP
 * and SPIFFE ID in what arrives over gRPC.
 */
import assert from "node:assert/strict";
import { describe, it, test } from "node:test";
import OpenAI from "openai";
import { clientIdentityOf } from "../../extproc/grpc/attributes.ts";
import { startOpenAIUpstream } from "../emulators/openai-upstream.ts";
import { startEnvoy } from "../harness/envoy.ts";
import { harness } from "../harness/fixture.ts";
import { send } from "../harness/test-http.ts";
import { shippedEnvoySettings } from "../support/envoy-settings.ts";
import { openAIProviderYaml, startTestGateway, testConfig } from "../support/gateway.ts";
import { PROVIDER_KEY } from "./openai-conformance.ts";

const SPIFFE = "spiffe://cluster.local/ns/shop/sa/web";
const chat = [Buffer.from(JSON.stringify({ model: "gpt-4.1-nano", messages: [{ role: "user", content: "hi" }] }))];

void describe("the caller's identity as Gearbox decodes it from what Envoy sends", () => {
  for (const config of ["sidecar.yaml", "egress-gateway.yaml", "local-dev.yaml"]) {
    void it(`${config}: IP and SPIFFE ID of an mTLS caller`, async (t) => {
      const f = await harness({ extProc: shippedEnvoySettings(config).extProc, peerCertificate: { uriSan: SPIFFE } });
      t.after(() => f.close());
      assert.equal((await send(f.envoy.url, { path: "/v1/chat/completions", body: chat })).status, 200);
      const [headers, ...rest] = f.extProc.messages();
      assert.equal(headers?.request, "request_headers");
      assert.deepEqual(clientIdentityOf(headers ?? {}), { address: "127.0.0.1", principal: SPIFFE });
      assert.ok(rest.length > 0);
      for (const message of rest) assert.deepEqual(clientIdentityOf(message), {}, `${message.request ?? "?"} carries no attributes`);
    });

    void it(`${config}: IP only on a plain-HTTP listener`, async (t) => {
      const f = await harness({ extProc: shippedEnvoySettings(config).extProc });
      t.after(() => f.close());
      assert.equal((await send(f.envoy.url, { path: "/v1/chat/completions", body: chat })).status, 200);
      assert.deepEqual(clientIdentityOf(f.extProc.messages()[0] ?? {}), { address: "127.0.0.1" });
    });
  }
});

test("Gearbox's ext_proc server serves requests that carry the caller's attributes", async (t) => {
  const upstream = await startOpenAIUpstream({ apiKey: PROVIDER_KEY });
  const gateway = await startTestGateway(testConfig(openAIProviderYaml(upstream.baseURL), { TEST_PROVIDER_KEY: PROVIDER_KEY }));
  const shipped = shippedEnvoySettings("sidecar.yaml");
  const envoy = await startEnvoy({
    extProc: { ...shipped.extProc, address: gateway.extProcAddress },
    routes: [{ header: "x-gearbox-upstream", value: "openai", cluster: "openai" }],
    clusters: { openai: { url: new URL(upstream.baseURL).origin } },
    peerCertificate: { uriSan: SPIFFE },
  });
  t.after(async () => {
    await envoy.close();
    await gateway.close();
    await upstream.close();
  });
  const client = new OpenAI({ baseURL: `${envoy.url}/v1`, apiKey: "app", maxRetries: 0 });
  const completion = await client.chat.completions.create({ model: "gpt-4.1-nano", messages: [{ role: "user", content: "x" }] });
  assert.equal(completion.object, "chat.completion");
  assert.equal(envoy.stats.upstreamRequests.openai, 1);
  assert.equal(envoy.stats.streamErrors, 0);
});
