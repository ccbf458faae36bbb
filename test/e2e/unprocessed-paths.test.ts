/**
 * APIs Gearbox does not process (files, uploads, audio…) through Envoy — played by the harness with
 * the processing mode the mesh install gives route `gearbox-unprocessed` (read from the rendered
 * istio/base) — with Gearbox as ext_proc: an upload above the 8 MiB buffer reaches the provider
 * whole, with the app's own credentials, and Gearbox sees its headers only. With the buffered mode
 * of LLM calls the same upload is cut with a 413 (what the route prevents).
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import type { ProcessingMode } from "../../proto/generated/envoy/extensions/filters/http/ext_proc/v3/ProcessingMode.ts";
import { startEnvoy } from "../harness/envoy.ts";
import { send, startUpstream } from "../harness/test-http.ts";
import { renderKustomize } from "../istio/manifests.ts";
import { firstMatch } from "../istio/mesh-rules.ts";
import { openAIProviderYaml, startTestGateway, testConfig } from "../support/gateway.ts";

const BUFFER_LIMIT = 8 * 1024 * 1024; // the listener's per_connection_buffer_limit_bytes in istio/base
const base = renderKustomize("istio/base");

async function upload(
  mode: ProcessingMode,
): Promise<{ status: number; upstreamBody: Buffer | undefined; upstreamHeaders: Record<string, unknown> | undefined; messages: number }> {
  const upstream = await startUpstream("openai");
  const gateway = await startTestGateway(testConfig(openAIProviderYaml(upstream.url), { TEST_PROVIDER_KEY: "sk-gearbox-provider" }));
  const envoy = await startEnvoy({
    extProc: { address: gateway.extProcAddress, processingMode: mode, failureModeAllow: false },
    routes: [{ header: "x-gearbox-upstream", value: "openai", cluster: "openai" }],
    defaultCluster: "openai",
    clusters: { openai: { url: upstream.url } },
    bufferLimitBytes: BUFFER_LIMIT,
  });
  try {
    const file = randomBytes(12 * 1024 * 1024);
    const parts = Array.from({ length: 12 }, (_, i) => file.subarray(i * 1024 * 1024, (i + 1) * 1024 * 1024));
    const res = await send(envoy.url, {
      path: "/v1/files",
      headers: { "content-type": "multipart/form-data; boundary=x", authorization: "Bearer sk-app-own-key", "x-gearbox-upstream": "edge" },
      body: parts,
    });
    const seen = upstream.requests.at(-1);
    if (res.status === 200) assert.ok(seen?.body.equals(file), "the upload arrives whole");
    return { status: res.status, upstreamBody: seen?.body, upstreamHeaders: seen?.headers, messages: envoy.stats.extProcMessagesSent };
  } finally {
    await envoy.close();
    await gateway.close();
    await upstream.close();
  }
}

test("an upload above the buffer limit passes headers-only, untouched, with the app's key", async () => {
  const { route, mode } = firstMatch(base, "api.openai.com", "/v1/files");
  assert.equal(route?.["name"], "gearbox-unprocessed");
  const result = await upload(mode);
  assert.equal(result.status, 200);
  assert.equal(result.upstreamHeaders?.["authorization"], "Bearer sk-app-own-key", "the app's own credentials, never Gearbox's provider key");
  assert.equal(result.upstreamHeaders?.["x-gearbox-upstream"], undefined, "a client-set routing header is removed by Gearbox");
  assert.equal(result.messages, 1, "Gearbox sees the request headers only");
});

test("the same upload with the buffered mode of LLM calls is cut at the buffer (413)", async () => {
  const { mode } = firstMatch(base, "api.openai.com", "/v1/chat/completions");
  assert.equal(mode["request_body_mode"], "BUFFERED");
  const result = await upload(mode);
  assert.equal(result.status, 413);
  assert.equal(result.upstreamBody, undefined, "nothing reached the provider");
});
