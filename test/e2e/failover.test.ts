/**
 * Provider failover end to end, through the front door and through Envoy (harness) + ext_proc,
 * with the official OpenAI SDK as the client: a primary (OpenAI emulator) answering 429/500 or
 * unreachable is replaced by its fallback of another kind (Anthropic emulator), in the client's
 * own schema, JSON or stream; the breaker sends later calls straight to the fallback and a
 * half-open probe brings the primary back; the front door's retries honour `retry-after`; with
 * no chain the provider's error passes as before.
 */
import assert from "node:assert/strict";
import { createServer as createHttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { startAnthropicUpstream, type AnthropicUpstream } from "../emulators/anthropic-upstream.ts";
import { loadChunkLines, loadJsonFixture } from "../emulators/fixtures.ts";
import { startOpenAIUpstream, type OpenAIUpstream } from "../emulators/openai-upstream.ts";
import { startEnvoy, type EnvoyHarness } from "../harness/envoy.ts";
import { shippedEnvoySettings } from "../support/envoy-settings.ts";
import { startTestGateway, testConfig, type TestGateway } from "../support/gateway.ts";
import { Samples } from "../support/prometheus.ts";
import { pino } from "pino";
import { startFrontDoor } from "../../extproc/http/front-door.ts";
import { ProviderHealth } from "../../extproc/resilience/provider-health.ts";
import { GatewayMetrics } from "../../extproc/telemetry/metrics.ts";
import { RequestTelemetry } from "../../extproc/telemetry/request-telemetry.ts";
import { startExtProcServer } from "../../extproc/grpc/server.ts";
import { createTracing } from "../../common/telemetry/tracing.ts";
import { SPAN_KIND, STATUS_CODE, startOtlpReceiver, type ReceivedSpan } from "../support/otlp-receiver.ts";
import { Runtime } from "../../extproc/runtime/runtime.ts";

const OPENAI_KEY = "sk-openai-failover-key-1234";
const ANTHROPIC_KEY = "sk-ant-failover-key-5678";
const FALLBACK_TEXT = (loadJsonFixture("vercel-ai/anthropic/anthropic-text") as { content: { text: string }[] }).content[0]?.text;
/** The recorded stream's text (a different recording from the JSON answer's). */
const FALLBACK_STREAM_TEXT = loadChunkLines("vercel-ai/anthropic/anthropic-text")
  .map((line) => JSON.parse(line) as { type: string; delta?: { text?: string } })
  .map((event) => (event.type === "content_block_delta" ? (event.delta?.text ?? "") : ""))
  .join("");
const OPENAI_TEXT = (loadJsonFixture("vercel-ai/openai/openai-text") as { choices: { message: { content: string } }[] }).choices[0]?.message.content;
const ERROR_FIXTURE = "vercel-ai/openai/reasoning-model-legacy-parameter-error";
const ASK = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "Say hello" }], max_tokens: 16 };

let openai: OpenAIUpstream;
let anthropic: AnthropicUpstream;
/**
 * A port nothing listens on: port 1, below the ephemeral range, as the harness tests use. A port
 * bound and released in \`before\` was seen answered by another test file's server by the time
 * this file used it (CI, 2,340 tests in parallel processes).
 */
const closedPort = 1;

before(async () => {
  openai = await startOpenAIUpstream({ apiKey: OPENAI_KEY });
  anthropic = await startAnthropicUpstream({ apiKey: ANTHROPIC_KEY });
});
after(async () => {
  await openai.close();
  await anthropic.close();
});

function yaml(resilience: string, openaiUrl = openai.baseURL): string {
  return (
    `providers:\n` +
    `  - { name: openai, kind: openai, base_url: '${openaiUrl}', api_key_env: OK, models: [gpt-4o-mini, gpt-4.1] }\n` +
    `  - { name: anthropic, kind: anthropic, base_url: '${anthropic.baseURL}', api_key_env: AK, models: [claude-haiku-4-5] }\n` +
    `resilience:\n${resilience}`
  );
}

const NO_RETRY = `  retry: { max_attempts: 1 }\n  fallbacks: { gpt-4o-mini: [claude-haiku-4-5] }\n`;

/** Calls made to each emulator since `mark()`. */
function counter() {
  const start = { openai: openai.requests.length, anthropic: anthropic.requests.length };
  return () => ({ openai: openai.requests.length - start.openai, anthropic: anthropic.requests.length - start.anthropic });
}

for (const transport of ["front door", "envoy + ext_proc"] as const) {
  describe(`failover via ${transport}`, () => {
    const closers: (() => Promise<void>)[] = [];
    let gateway: TestGateway | undefined;
    let envoy: EnvoyHarness | undefined;
    after(async () => {
      for (const close of closers.reverse()) await close();
    });

    async function clientFor(config: string, openaiUrl = openai.url): Promise<OpenAI> {
      gateway = await startTestGateway(testConfig(config, { OK: OPENAI_KEY, AK: ANTHROPIC_KEY }));
      const g = gateway;
      closers.push(() => g.close());
      let base = g.baseURL;
      if (transport === "envoy + ext_proc") {
        const shipped = shippedEnvoySettings();
        const e = await startEnvoy({
          extProc: { ...shipped.extProc, address: g.extProcAddress },
          routes: [
            { header: "x-gearbox-upstream", value: "openai", cluster: "openai" },
            { header: "x-gearbox-upstream", value: "anthropic", cluster: "anthropic" },
          ],
          clusters: { openai: { url: openaiUrl }, anthropic: { url: anthropic.url } },
        });
        envoy = e;
        closers.push(() => e.close());
        base = `${e.url}/v1`;
      }
      return new OpenAI({ baseURL: base, apiKey: "client-key", maxRetries: 0 });
    }

    function lastLog(): Record<string, unknown> | undefined {
      return gateway?.logs.findLast((l) => l.msg === "request");
    }

    test("primary 429 → the Anthropic fallback answers in OpenAI's schema, with its own key; the log charges it", async () => {
      const client = await clientFor(yaml(NO_RETRY));
      const calls = counter();
      openai.queue({ fixture: ERROR_FIXTURE, status: 429 });
      const { data, response } = await client.chat.completions.create(ASK).withResponse();
      assert.equal(data.choices[0]?.message.content, FALLBACK_TEXT);
      assert.equal(data.object, "chat.completion");
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("x-gearbox-fallback"), "openai:429>anthropic");
      assert.equal(response.headers.get("retry-after"), null, "the failed answer's headers are gone");
      assert.deepEqual(calls(), { openai: 1, anthropic: 1 });
      const sent = anthropic.requests.at(-1);
      assert.equal(sent?.headers["x-api-key"], ANTHROPIC_KEY);
      assert.equal(sent?.headers.authorization, undefined, "no client credential goes upstream");
      assert.equal((sent?.json as { model: string }).model, "claude-haiku-4-5");
      const line = lastLog();
      assert.equal(line?.provider, "anthropic");
      assert.equal(line?.upstream_model, "claude-haiku-4-5");
      assert.equal(line?.status, 200);
      assert.equal(line?.fallback, "openai:429>anthropic");
      assert.equal(line?.attempts, 2);
      assert.deepEqual(line?.upstream_attempts, [{ provider: "openai", cause: "429" }, { provider: "anthropic" }]);
      assert.equal(typeof line?.cost_usd, "number", "claude-haiku-4-5's list price, not gpt-4o-mini's");
      assert.ok(!JSON.stringify(gateway?.logs).includes(ANTHROPIC_KEY) && !JSON.stringify(gateway?.logs).includes(OPENAI_KEY));
      if (envoy) assert.deepEqual(envoy.stats.ignoredMutations, [], "Envoy applies every mutation of the replacement");
    });

    test("a stream request: the fallback's stream is translated whole into an OpenAI stream", async () => {
      const client = await clientFor(yaml(NO_RETRY));
      openai.queue({ fixture: ERROR_FIXTURE, status: 500 });
      const { data: stream, response } = await client.chat.completions.create({ ...ASK, stream: true }).withResponse();
      let text = "";
      let finish: string | null | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? "";
        finish = chunk.choices[0]?.finish_reason ?? finish;
      }
      assert.equal(text, FALLBACK_STREAM_TEXT);
      assert.ok(text.length > 0);
      assert.equal(finish, "stop");
      assert.equal(response.headers.get("content-type"), "text/event-stream");
      assert.equal(response.headers.get("x-gearbox-fallback"), "openai:500>anthropic");
      assert.equal((anthropic.requests.at(-1)?.json as { stream?: boolean }).stream, true);
    });

    test("the breaker opens: later calls go straight to the fallback, the dead provider gets none", async () => {
      const client = await clientFor(yaml(`${NO_RETRY}  breaker: { failure_threshold: 2, open_ms: 60000 }\n`));
      openai.queue({ fixture: ERROR_FIXTURE, status: 500 }, { fixture: ERROR_FIXTURE, status: 503 });
      await client.chat.completions.create(ASK);
      await client.chat.completions.create(ASK);
      const calls = counter();
      for (let i = 0; i < 3; i++) {
        const { data, response } = await client.chat.completions.create(ASK).withResponse();
        assert.equal(data.choices[0]?.message.content, FALLBACK_TEXT);
        assert.equal(response.headers.get("x-gearbox-fallback"), "openai:breaker_open>anthropic");
      }
      assert.equal(lastLog()?.attempts, 1, "one call: the open breaker's provider was not called");
      const { data: stream, response } = await client.chat.completions.create({ ...ASK, stream: true }).withResponse();
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
      assert.equal(text, FALLBACK_STREAM_TEXT, "streamed as it came, from the fallback");
      assert.equal(response.headers.get("x-gearbox-fallback"), "openai:breaker_open>anthropic");
      assert.deepEqual(calls(), { openai: 0, anthropic: 4 });
    });

    test("half-open: after open_ms one probe goes to the primary; its success closes the breaker", async () => {
      const client = await clientFor(yaml(`${NO_RETRY}  breaker: { failure_threshold: 1, open_ms: 200 }\n`));
      openai.queue({ fixture: ERROR_FIXTURE, status: 500 });
      await client.chat.completions.create(ASK);
      const open = counter();
      await client.chat.completions.create(ASK);
      assert.deepEqual(open(), { openai: 0, anthropic: 1 }, "open: straight to the fallback");
      await sleep(250);
      const probing = counter();
      const { response } = await client.chat.completions.create(ASK).withResponse();
      assert.equal(response.headers.get("x-gearbox-fallback"), null);
      await client.chat.completions.create(ASK);
      assert.deepEqual(probing(), { openai: 2, anthropic: 0 }, "the probe succeeded: closed again");
    });

    test("no chain for the model: the provider's 429 reaches the client as before", async () => {
      const client = await clientFor(yaml(NO_RETRY));
      const calls = counter();
      openai.queue({ fixture: ERROR_FIXTURE, status: 429, headers: { "retry-after": "3" } });
      await assert.rejects(client.chat.completions.create({ ...ASK, model: "gpt-4.1" }), (err: unknown) => {
        assert.ok(err instanceof OpenAI.RateLimitError);
        assert.equal(err.headers.get("x-gearbox-fallback"), null);
        return true;
      });
      assert.deepEqual(calls(), { openai: 1, anthropic: 0 });
    });

    test("an unreachable primary: the fallback answers, not a 502/503", async () => {
      const client = await clientFor(yaml(NO_RETRY, `http://127.0.0.1:${closedPort}/v1`), `http://127.0.0.1:${closedPort}`);
      const { data, response } = await client.chat.completions.create(ASK).withResponse();
      assert.equal(data.choices[0]?.message.content, FALLBACK_TEXT);
      assert.equal(response.headers.get("x-gearbox-fallback"), "openai:connect>anthropic");
    });

    test("'edge' as the last resort: an OpenAI-compatible edge agent answers, recorded as an edge answer at no cloud cost", async () => {
      // The OpenAI emulator stands in for an edge agent (the same API); the real one is in cascade.test.ts.
      const agent = await startOpenAIUpstream();
      closers.push(() => agent.close());
      const edge = `edge:\n  agents: [{ address: '127.0.0.1:${agent.port}', models: [tiny] }]\n  default_model: tiny\nroute: { heuristic: { enable: false } }\n`;
      const client = await clientFor(edge + yaml(`  retry: { max_attempts: 1 }\n  fallbacks: { claude-haiku-4-5: [edge] }\n`));
      anthropic.queue({ error: { type: "overloaded_error", message: "Overloaded" } });
      const calls = counter();
      const { data, response } = await client.chat.completions.create({ ...ASK, model: "claude-haiku-4-5" }).withResponse();
      assert.equal(data.choices[0]?.message.content, OPENAI_TEXT);
      assert.equal(agent.requests.length, 1);
      assert.equal(response.headers.get("x-gearbox-route"), "edge");
      assert.equal(response.headers.get("x-gearbox-fallback"), "anthropic:529>edge");
      assert.deepEqual(calls(), { openai: 0, anthropic: 1 });
      assert.equal((agent.requests[0]?.json as { model: string }).model, "tiny");
      assert.equal(agent.requests[0]?.headers.authorization, undefined, "no key goes to an edge agent");
      const line = lastLog();
      assert.equal(line?.route, "edge");
      assert.equal(line?.cost_usd, 0);
      // A client that insists on the cloud never gets the edge.
      anthropic.queue({ error: { type: "overloaded_error", message: "Overloaded" } });
      await assert.rejects(
        client.chat.completions.create({ ...ASK, model: "claude-haiku-4-5" }, { headers: { "x-gearbox-route": "cloud" } }),
        (err: unknown) => err instanceof OpenAI.APIError && err.status === 503,
      );
    });

    test("a 503 without a body (through Envoy: headers with end_of_stream) is replaced too", async () => {
      const bare = createHttpServer((req, res) => {
        req.resume();
        req.on("end", () => {
          res.writeHead(503, { "content-length": "0" });
          res.end();
        });
      });
      await new Promise<void>((resolve) => bare.listen(0, "127.0.0.1", resolve));
      closers.push(async () => {
        bare.closeAllConnections();
        await new Promise<void>((resolve) => bare.close(() => resolve()));
      });
      const url = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;
      const client = await clientFor(yaml(NO_RETRY, `${url}/v1`), url);
      const { data, response } = await client.chat.completions.create(ASK).withResponse();
      assert.equal(data.choices[0]?.message.content, FALLBACK_TEXT);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("x-gearbox-fallback"), "openai:503>anthropic");
      if (envoy) assert.deepEqual(envoy.stats.ignoredMutations, []);
    });

    test("every member fails: the primary's error goes to the client, the header lists the attempts", async () => {
      const client = await clientFor(yaml(NO_RETRY));
      openai.queue({ fixture: ERROR_FIXTURE, status: 429 });
      anthropic.queue({ error: { type: "overloaded_error", message: "Overloaded" } });
      await assert.rejects(client.chat.completions.create(ASK), (err: unknown) => {
        assert.ok(err instanceof OpenAI.RateLimitError, String(err));
        assert.equal(err.headers.get("x-gearbox-fallback"), "openai:429>anthropic:529");
        return true;
      });
    });
  });
}

describe("front door retries", () => {
  const closers: (() => Promise<void>)[] = [];
  after(async () => {
    for (const close of closers.reverse()) await close();
  });
  async function gatewayWith(resilience: string): Promise<{ client: OpenAI; gateway: TestGateway }> {
    const gateway = await startTestGateway(testConfig(yaml(resilience), { OK: OPENAI_KEY, AK: ANTHROPIC_KEY }));
    closers.push(() => gateway.close());
    return { client: new OpenAI({ baseURL: gateway.baseURL, apiKey: "client-key", maxRetries: 0 }), gateway };
  }

  test("a 429 with a short retry-after is retried on the primary; one past max_retry_after_ms goes to the fallback", async () => {
    const { client, gateway } = await gatewayWith(
      `  retry: { max_attempts: 2, max_retry_after_ms: 5000, base_backoff_ms: 1 }\n  fallbacks: { gpt-4o-mini: [claude-haiku-4-5] }\n`,
    );
    let calls = counter();
    openai.queue({ fixture: ERROR_FIXTURE, status: 429, headers: { "retry-after": "0" } });
    const retried = await client.chat.completions.create(ASK).withResponse();
    assert.deepEqual(calls(), { openai: 2, anthropic: 0 });
    assert.equal(retried.response.headers.get("x-gearbox-fallback"), "openai:429>openai");
    const line = gateway.logs.findLast((l) => l.msg === "request");
    assert.equal(line?.retries, 1);
    assert.equal(line?.provider, "openai");
    calls = counter();
    openai.queue({ fixture: ERROR_FIXTURE, status: 429, headers: { "retry-after": "30" } });
    const fellBack = await client.chat.completions.create(ASK).withResponse();
    assert.deepEqual(calls(), { openai: 1, anthropic: 1 }, "not waited for: the fallback answered");
    assert.equal(fellBack.response.headers.get("x-gearbox-fallback"), "openai:429>anthropic");
  });

  test("the cascade's cloud upgrade is retried too", async () => {
    const agent = await startOpenAIUpstream();
    closers.push(() => agent.close());
    const edge = `edge:\n  agents: [{ address: '127.0.0.1:${agent.port}', models: [tiny] }]\n  fallback_model: gpt-4o-mini\n`;
    const gateway = await startTestGateway(
      testConfig(edge + yaml(`  retry: { max_attempts: 2, base_backoff_ms: 1 }\n`), { OK: OPENAI_KEY, AK: ANTHROPIC_KEY }),
    );
    closers.push(() => gateway.close());
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: "client-key", maxRetries: 0 });
    const calls = counter();
    // The emulator's edge answer carries no confidence: the cascade upgrades it to the cloud.
    openai.queue({ fixture: ERROR_FIXTURE, status: 503 });
    const { data, response } = await client.chat.completions.create({ ...ASK, model: "tiny" }).withResponse();
    assert.equal(response.headers.get("x-gearbox-route"), "cloud");
    assert.equal(data.choices[0]?.message.content, OPENAI_TEXT);
    assert.deepEqual(calls(), { openai: 2, anthropic: 0 }, "the 503 was retried");
  });

  test("a provider that hangs after its headers: released at idle_ms, the fallback answers", async () => {
    const hanging = createHttpServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"id":"chatcmpl-1","object":"chat.');
    });
    await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", resolve));
    closers.push(async () => {
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    });
    const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/v1`;
    const config = yaml(`  retry: { max_attempts: 1 }\n  fallbacks: { gpt-4o-mini: [claude-haiku-4-5] }\n`, url).replace(
      "models: [gpt-4o-mini, gpt-4.1] }",
      "models: [gpt-4o-mini, gpt-4.1], timeouts: { idle_ms: 200 } }",
    );
    const gateway = await startTestGateway(testConfig(config, { OK: OPENAI_KEY, AK: ANTHROPIC_KEY }));
    closers.push(() => gateway.close());
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: "client-key", maxRetries: 0 });
    const { data, response } = await client.chat.completions.create(ASK).withResponse();
    assert.equal(data.choices[0]?.message.content, FALLBACK_TEXT);
    assert.equal(response.headers.get("x-gearbox-fallback"), "openai:timeout>anthropic");
  });

  test("a 400 is the provider's answer: never retried, never a fallback", async () => {
    const { client } = await gatewayWith(`  retry: { max_attempts: 3, base_backoff_ms: 1 }\n  fallbacks: { gpt-4o-mini: [claude-haiku-4-5] }\n`);
    const calls = counter();
    openai.queue({ fixture: ERROR_FIXTURE, status: 400 });
    await assert.rejects(client.chat.completions.create(ASK), (err: unknown) => err instanceof OpenAI.BadRequestError);
    assert.deepEqual(calls(), { openai: 1, anthropic: 0 });
  });
});

test("metrics: retries and fallbacks by provider and cause, each provider's breaker state", async () => {
  const config = testConfig(
    yaml(
      `  retry: { max_attempts: 2, base_backoff_ms: 1 }\n  breaker: { failure_threshold: 3, open_ms: 60000 }\n  fallbacks: { gpt-4o-mini: [claude-haiku-4-5] }\n`,
    ),
    { OK: OPENAI_KEY, AK: ANTHROPIC_KEY },
  );
  const providerHealth = new ProviderHealth(config.resilience);
  const metrics = new GatewayMetrics({ breakers: providerHealth }, { defaultMetrics: false });
  const logger = pino({ level: "silent" });
  const door = await startFrontDoor(
    { runtime: new Runtime(config, { providerHealth }), logger, telemetry: new RequestTelemetry(logger, metrics) },
    0,
    "127.0.0.1",
  );
  try {
    const client = new OpenAI({ baseURL: `http://127.0.0.1:${door.port}/v1`, apiKey: "client-key", maxRetries: 0 });
    openai.queue({ fixture: ERROR_FIXTURE, status: 500 }, { fixture: ERROR_FIXTURE, status: 500 }, { fixture: ERROR_FIXTURE, status: 503 });
    await client.chat.completions.create(ASK); // 500, retried, 500 → anthropic
    await client.chat.completions.create(ASK); // 503: the third failure opens the breaker, no retry → anthropic
    await client.chat.completions.create(ASK); // open → anthropic
    const m = Samples.parse(await metrics.registry.metrics());
    assert.equal(m.get("gearbox_upstream_retries_total", { provider: "openai", cause: "500" }), 1);
    assert.equal(m.sum("gearbox_upstream_retries_total"), 1);
    assert.equal(m.get("gearbox_fallbacks_total", { from: "openai", to: "anthropic", cause: "500" }), 1);
    assert.equal(m.get("gearbox_fallbacks_total", { from: "openai", to: "anthropic", cause: "503" }), 1);
    assert.equal(m.get("gearbox_fallbacks_total", { from: "openai", to: "anthropic", cause: "breaker_open" }), 1);
    assert.equal(m.get("gearbox_provider_breaker_state", { provider: "openai" }), 2);
    assert.equal(m.get("gearbox_provider_breaker_state", { provider: "anthropic" }), 0);
    assert.equal(m.get("gearbox_requests_total", { endpoint: "chat_completions", route: "cloud", model: "gpt-4o-mini", tenant: "-", status: "200" }), 3);
  } finally {
    await door.close();
  }
});

for (const transport of ["front door", "envoy + ext_proc"] as const) {
  test(`an Anthropic client whose provider is overloaded gets the OpenAI fallback's answer as an Anthropic message (${transport})`, async () => {
    const gateway = await startTestGateway(
      testConfig(yaml(`  retry: { max_attempts: 1 }\n  fallbacks: { claude-haiku-4-5: [gpt-4o-mini] }\n`), { OK: OPENAI_KEY, AK: ANTHROPIC_KEY }),
    );
    let base = `http://127.0.0.1:${gateway.frontDoor.port}`;
    let close = () => gateway.close();
    if (transport === "envoy + ext_proc") {
      const envoy = await startEnvoy({
        extProc: { ...shippedEnvoySettings().extProc, address: gateway.extProcAddress },
        routes: [
          { header: "x-gearbox-upstream", value: "openai", cluster: "openai" },
          { header: "x-gearbox-upstream", value: "anthropic", cluster: "anthropic" },
        ],
        clusters: { openai: { url: openai.url }, anthropic: { url: anthropic.url } },
      });
      base = envoy.url;
      close = async () => {
        await envoy.close();
        await gateway.close();
      };
    }
    try {
      const client = new Anthropic({ baseURL: base, apiKey: "client-key", maxRetries: 0 });
      anthropic.queue({ error: { type: "overloaded_error", message: "Overloaded" } });
      const calls = counter();
      const { data, response } = await client.messages
        .create({ model: "claude-haiku-4-5", max_tokens: 16, messages: [{ role: "user", content: "Say hello" }] })
        .withResponse();
      assert.equal(data.type, "message");
      const first = data.content[0];
      assert.equal(first?.type === "text" ? first.text : undefined, OPENAI_TEXT);
      assert.equal(response.headers.get("x-gearbox-fallback"), "anthropic:529>openai");
      assert.deepEqual(calls(), { openai: 1, anthropic: 1 });
      assert.equal(openai.requests.at(-1)?.headers.authorization, `Bearer ${OPENAI_KEY}`);
      assert.equal((openai.requests.at(-1)?.json as { model: string }).model, "gpt-4o-mini");
    } finally {
      await close();
    }
  });
}

for (const transport of ["front door", "envoy + ext_proc"] as const) {
  test(`tracing (${transport}): one CLIENT span per attempt, retries and the fallback included`, async () => {
    const receiver = await startOtlpReceiver();
    const config = testConfig(
      yaml(`  retry: { max_attempts: 2, base_backoff_ms: 1 }\n  fallbacks: { gpt-4o-mini: [claude-haiku-4-5] }\n`) +
        `telemetry:\n  tracing: { enable: true, endpoint: '${receiver.endpoint}', service_name: gearbox-failover }\n`,
      { OK: OPENAI_KEY, AK: ANTHROPIC_KEY },
    );
    const tracing = createTracing(config.telemetry.tracing, { defaultServiceName: "gearbox" });
    assert.ok(tracing.tracer);
    const deps = { runtime: new Runtime(config), logger: pino({ level: "silent" }), tracer: tracing.tracer };
    const frontDoor = await startFrontDoor(deps, 0, "127.0.0.1");
    const extProc = await startExtProcServer(deps, 0, "127.0.0.1");
    let base = `http://127.0.0.1:${frontDoor.port}`;
    const envoy =
      transport === "envoy + ext_proc"
        ? await startEnvoy({
            extProc: { ...shippedEnvoySettings().extProc, address: `127.0.0.1:${extProc.port}` },
            routes: [
              { header: "x-gearbox-upstream", value: "openai", cluster: "openai" },
              { header: "x-gearbox-upstream", value: "anthropic", cluster: "anthropic" },
            ],
            clusters: { openai: { url: openai.url }, anthropic: { url: anthropic.url } },
          })
        : undefined;
    if (envoy) base = envoy.url;
    try {
      const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "client-key", maxRetries: 0 });
      // Through Envoy, Envoy's route retry policy retries (none in this harness route): one 503 is its final answer.
      openai.queue({ fixture: ERROR_FIXTURE, status: 503 }, ...(envoy ? [] : [{ fixture: ERROR_FIXTURE, status: 503 }]));
      const { response } = await client.chat.completions.create(ASK).withResponse();
      const traceId = response.headers.get("x-gearbox-trace-id");
      assert.ok(traceId);
      const calls = (spans: readonly ReceivedSpan[]) => spans.filter((s) => s.traceId === traceId && s.kind === SPAN_KIND.client);
      const spans = calls(
        await receiver.waitFor((all) => calls(all).length >= (envoy ? 2 : 3) && all.some((s) => s.traceId === traceId && s.parentSpanId === ""), 5000),
      );
      const byProvider = (name: string) => spans.filter((s) => s.attributes["gen_ai.provider.name"] === name).sort((a, b) => Number(a.startNs - b.startNs));
      const primary = byProvider("openai");
      const fallback = byProvider("anthropic");
      assert.equal(primary.length, envoy ? 1 : 2, spans.map((s) => `${s.name} ${JSON.stringify(s.attributes)}`).join(" | "));
      for (const span of primary) assert.equal(span.status.code, STATUS_CODE.error);
      if (!envoy) assert.equal(primary[1]?.attributes["gearbox.fallback.cause"], "openai:503");
      assert.equal(fallback.length, 1);
      assert.equal(fallback[0]?.attributes["gearbox.fallback.cause"], "openai:503");
      assert.equal(fallback[0]?.attributes["gearbox.attempt"], 1);
      assert.notEqual(fallback[0]?.status.code, STATUS_CODE.error);
      assert.equal(response.headers.get("x-gearbox-fallback"), envoy ? "openai:503>anthropic" : "openai:503>openai:503>anthropic");
    } finally {
      await envoy?.close();
      await Promise.all([frontDoor.close(), extProc.drain(1000)]);
      await tracing.shutdown();
      await receiver.close();
    }
  });
}
