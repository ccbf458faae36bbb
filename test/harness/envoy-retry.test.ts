/**
 * The router's retries in the Envoy stand-in, with the retry policy and retry budget shipped in
 * envoy/sidecar.yaml (read from the file, so the tests follow the config): a provider's 429 or
 * 5xx is retried once after the back-off (a 429's retry-after when it is short), a refused
 * connection is retried, a 400 and a reset after the request was sent are not, the failed try
 * never reaches ext_proc or the client, and the budget caps retries in a storm.
 */
import assert from "node:assert/strict";
import type http from "node:http";
import { after, test } from "node:test";
import { startEnvoy, type EnvoyHarness } from "./envoy.ts";
import { continueAll } from "./fixture.ts";
import { startScriptedExtProc } from "./scripted-extproc.ts";
import { send, startUpstream, type RecordedRequest, type TestUpstream } from "./test-http.ts";
import { shippedProviderRetries } from "../support/envoy-settings.ts";

const shipped = shippedProviderRetries("sidecar.yaml", "openai");
const extProc = await startScriptedExtProc(continueAll);
after(() => extProc.close());

/** An upstream that answers each call with the next status of `statuses` (then 200), with optional headers. */
function sequence(statuses: number[], headers: Record<string, string> = {}): (r: RecordedRequest, res: http.ServerResponse) => void {
  let i = 0;
  return (_request, res) => {
    const status = statuses[i++] ?? 200;
    const body = Buffer.from(JSON.stringify({ status }));
    res.writeHead(status, { "content-type": "application/json", "content-length": String(body.length), ...(status !== 200 && headers) });
    res.end(body);
  };
}

async function envoyFor(upstream: TestUpstream | { url: string }): Promise<EnvoyHarness> {
  return startEnvoy({
    extProc: { address: extProc.address, processingMode: { request_body_mode: "BUFFERED", response_body_mode: "BUFFERED" } },
    routes: [{ header: "x-gearbox-upstream", value: "openai", cluster: "openai", retryPolicy: shipped.retryPolicy }],
    clusters: { openai: { url: upstream.url, retryBudget: shipped.retryBudget } },
  });
}

const call = (envoy: EnvoyHarness) =>
  send(envoy.url, {
    path: "/v1/chat/completions",
    headers: { "x-gearbox-upstream": "openai", "content-type": "application/json" },
    body: [Buffer.from('{"model":"m"}')],
  });

void test("the shipped policy: one retry on connect failures, 429 and 5xx, retry-after read, a 20 % budget", () => {
  assert.equal(shipped.retryPolicy.num_retries, 1);
  assert.deepEqual(shipped.retryPolicy.retriable_status_codes, [429, 500, 502, 503, 504]);
  assert.deepEqual(shipped.retryPolicy.rate_limited_retry_back_off?.reset_headers, ["retry-after"]);
  assert.equal(shipped.retryBudget?.budget_percent, 20);
});

for (const status of [429, 500, 503]) {
  void test(`a ${status} is retried once and the client gets the second try's answer (the same body sent again)`, async (t) => {
    const upstream = await startUpstream("openai", sequence([status]));
    const envoy = await envoyFor(upstream);
    t.after(async () => (await envoy.close(), await upstream.close()));
    const res = await call(envoy);
    assert.equal(res.status, 200);
    assert.equal(upstream.requests.length, 2);
    assert.equal(upstream.requests[1]?.body.toString(), '{"model":"m"}');
    assert.deepEqual(envoy.stats.upstreamRetries, { openai: 1 });
    // ext_proc saw one response: the failed try never left the router.
    const seen = extProc.streams.at(-1)?.filter((m) => m.request === "response_headers") ?? [];
    assert.equal(seen.length, 1);
    assert.equal(seen[0]?.response_headers?.headers?.headers?.find((h) => h.key === ":status")?.raw_value?.toString(), "200");
  });
}

void test("two failures: the second answer goes on (num_retries 1), for Gearbox's fallback to take over", async (t) => {
  const upstream = await startUpstream("openai", sequence([429, 429], { "retry-after": "0" }));
  const envoy = await envoyFor(upstream);
  t.after(async () => (await envoy.close(), await upstream.close()));
  const res = await call(envoy);
  assert.equal(res.status, 429);
  assert.equal(upstream.requests.length, 2);
});

void test("a 400 is not retried", async (t) => {
  const upstream = await startUpstream("openai", sequence([400]));
  const envoy = await envoyFor(upstream);
  t.after(async () => (await envoy.close(), await upstream.close()));
  assert.equal((await call(envoy)).status, 400);
  assert.equal(upstream.requests.length, 1);
  assert.deepEqual(envoy.stats.upstreamRetries, {});
});

void test("a reset after the request reached the provider is not retried (it may have been billed)", async (t) => {
  const upstream = await startUpstream("openai", (_r, res) => void res.socket?.destroy());
  const envoy = await envoyFor(upstream);
  t.after(async () => (await envoy.close(), await upstream.close()));
  const res = await call(envoy);
  assert.equal(res.status, 503);
  assert.equal(upstream.requests.length, 1);
});

void test("a refused connection is retried (connect-failure), then answered 503 by the router", async (t) => {
  const closed = await startUpstream("openai");
  const url = closed.url;
  await closed.close();
  const envoy = await envoyFor({ url });
  t.after(() => envoy.close());
  const res = await call(envoy);
  assert.equal(res.status, 503);
  assert.deepEqual(envoy.stats.upstreamRetries, { openai: 1 });
  assert.deepEqual(envoy.stats.upstreamRequests, { openai: 2 });
});

void test("a retry-after longer than max_interval is not waited for: the jittered back-off applies", async (t) => {
  // 3600 s is over the shipped 10 s cap: a test that waited for it would time out.
  const upstream = await startUpstream("openai", sequence([429], { "retry-after": "3600" }));
  const envoy = await envoyFor(upstream);
  t.after(async () => (await envoy.close(), await upstream.close()));
  assert.equal((await call(envoy)).status, 200);
  assert.equal(upstream.requests.length, 2);
});

void test("in a 429 storm the retry budget caps retries at 20 % of the requests in flight (never below 3)", async (t) => {
  // Every call is refused with retry-after 1 s: retries wait, so they pile up against the budget.
  const upstream = await startUpstream("openai", (_r, res) => {
    res.writeHead(429, { "retry-after": "1", "content-length": "2" });
    res.end("{}");
  });
  const envoy = await envoyFor(upstream);
  t.after(async () => (await envoy.close(), await upstream.close()));
  const requests = 50;
  const answers = await Promise.all(Array.from({ length: requests }, () => call(envoy)));
  assert.ok(answers.every((a) => a.status === 429));
  const retries = envoy.stats.upstreamRetries.openai ?? 0;
  assert.ok(retries >= 3 && retries <= Math.ceil(requests * 0.2), `retries ${retries} of ${requests}`);
  assert.equal((envoy.stats.upstreamRetryOverflow.openai ?? 0) + retries, requests);
  assert.equal(upstream.requests.length, requests + retries);
});
