/**
 * A provider's response headers through both transports (the front door, and Envoy — the harness
 * with `envoy/local-dev.yaml`'s ext_proc settings): only the allowlist of
 * `extproc/providers/response-headers.ts` reaches the client, and an upstream that echoes the
 * provider key in a header does not leak it.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startOpenAIUpstream, type OpenAIUpstream } from "../emulators/openai-upstream.ts";
import { entryTo, openAIProviderYaml, startTestGateway, testConfig, type TestGateway } from "../support/gateway.ts";
import { PROVIDER_KEY } from "./openai-conformance.ts";

/** What a careless or hostile upstream sends back besides the answer. */
const ECHOING = {
  "x-debug-authorization": `Bearer ${PROVIDER_KEY}`,
  "x-request-id": `req_${PROVIDER_KEY}`,
  "set-cookie": "__cf_bm=provider-cdn-cookie; path=/",
  "openai-organization": "org-gearbox-account",
  "x-ratelimit-remaining-requests": "4242",
  "openai-processing-ms": "17",
  server: "cloudflare",
};

const chat = (stream: boolean) => JSON.stringify({ model: "gpt-4.1-nano", messages: [{ role: "user", content: "hi" }], ...(stream && { stream: true }) });

function assertScreened(res: Response): void {
  for (const [name, value] of res.headers) assert.doesNotMatch(value, new RegExp(PROVIDER_KEY), `${name} leaks the provider key`);
  assert.equal(res.headers.get("x-debug-authorization"), null);
  assert.equal(res.headers.get("set-cookie"), null);
  assert.equal(res.headers.get("openai-organization"), null);
  assert.equal(res.headers.get("x-ratelimit-remaining-requests"), null, "the shared key's quota is not the caller's");
  assert.equal(res.headers.get("x-request-id"), "req_[REDACTED]");
  assert.equal(res.headers.get("openai-processing-ms"), "17");
  assert.notEqual(res.headers.get("server"), "cloudflare");
  assert.ok(res.headers.get("x-gearbox-request-id"));
}

for (const transport of ["front door", "Envoy + ext_proc"] as const) {
  describe(`provider response headers through the ${transport}`, () => {
    let upstream: OpenAIUpstream;
    let gateway: TestGateway;
    let closeEntry: () => Promise<void> = () => Promise.resolve();
    let base: string;
    before(async () => {
      upstream = await startOpenAIUpstream({ apiKey: PROVIDER_KEY });
      gateway = await startTestGateway(testConfig(openAIProviderYaml(upstream.baseURL), { TEST_PROVIDER_KEY: PROVIDER_KEY }));
      const entry = await entryTo(transport, gateway, upstream.baseURL);
      base = entry.base;
      closeEntry = entry.close;
    });
    after(async () => {
      await closeEntry();
      await gateway.close();
      await upstream.close();
    });
    const post = (body: string) => fetch(`${base}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body });

    test("a JSON answer: allowlisted headers only, the echoed key redacted", async () => {
      upstream.queue({ fixture: "vercel-ai/openai/openai-text", headers: ECHOING });
      const res = await post(chat(false));
      assert.equal(res.status, 200);
      assertScreened(res);
      assert.match(res.headers.get("content-type") ?? "", /application\/json/);
      await res.arrayBuffer();
    });

    test("an event stream: the same screening on the streamed answer's headers", async () => {
      upstream.queue({ fixture: "vercel-ai/openai/openai-text", headers: ECHOING });
      const res = await post(chat(true));
      assert.equal(res.status, 200);
      assertScreened(res);
      assert.match(await res.text(), /data: \[DONE\]/);
    });

    test("a 429: retry guidance the SDKs act on still reaches the client", async () => {
      upstream.queue({ fixture: "vercel-ai/openai/openai-text", status: 429, headers: { ...ECHOING, "retry-after": "7", "x-should-retry": "true" } });
      const res = await post(chat(false));
      assert.equal(res.status, 429);
      assertScreened(res);
      assert.equal(res.headers.get("retry-after"), "7");
      assert.equal(res.headers.get("x-should-retry"), "true");
      await res.arrayBuffer();
    });
  });
}
