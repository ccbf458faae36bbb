/**
 * Runaway protection end to end (front door and Envoy + ext_proc, the memory and the Redis
 * limiter, the official OpenAI SDK and raw HTTP as clients, the OpenAI emulator as the counting
 * provider): identical requests of many callers — distinct call keys, or distinct source
 * addresses without a key — all reach the provider; one caller's loop reaches it
 * `runaway.max_identical` times and every repeat past that is answered with the bytes of the
 * answer just given (JSON and SSE), marked `x-gearbox-route: cache`, `x-gearbox-reason:
 * runaway_repeat`; when that answer failed, the repeats are refused with 429 as before.
 */
import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import { pino } from "pino";
import type { GatewayConfig } from "../../extproc/config/load.ts";
import { createAuthDeps } from "../../extproc/governance/auth.ts";
import { Governor } from "../../extproc/governance/governor.ts";
import { generateKey } from "../../extproc/governance/keys.ts";
import type { ProcessorDeps } from "../../extproc/processor/processor.ts";
import type { LimiterStore } from "../../extproc/store/limiter.ts";
import { MemoryLimiter } from "../../extproc/store/memory-limiter.ts";
import { MemoryTenantStore } from "../../extproc/store/memory-tenant-store.ts";
import { RedisLimiter } from "../../extproc/store/redis-limiter.ts";
import { testRedis, type TestRedis } from "../../extproc/store/test-redis.ts";
import { GatewayMetrics } from "../../extproc/telemetry/metrics.ts";
import { RequestTelemetry } from "../../extproc/telemetry/request-telemetry.ts";
import { startOpenAIUpstream, type OpenAIUpstream } from "../emulators/openai-upstream.ts";
import { startGatewayPair, testConfig, type GatewayPair } from "../support/gateway.ts";
import { Runtime } from "../../extproc/runtime/runtime.ts";

const MAX = 3;
const KEYS = 30;
const MAX_ENTRIES = 6;

interface Setup {
  cloud: OpenAIUpstream;
  gateway: GatewayPair;
  governor: Governor;
  metrics: GatewayMetrics;
  keys: string[];
  logs: Record<string, unknown>[];
  close(): Promise<void>;
}

async function setup(limiter: "memory" | "redis"): Promise<Setup> {
  const cloud = await startOpenAIUpstream({ apiKey: "sk-cloud-key" });
  const config: GatewayConfig = testConfig(
    `providers:\n  - { name: openai, kind: openai, base_url: '${cloud.baseURL}', api_key_env: K, models: [gpt-4.1-nano] }\n` +
      `tenants:\n  - { id: shop }\n` +
      // Keyless callers are the anonymous tenant `default`, as on embedded defaults.
      `auth: { required: false }\n` +
      `runaway: { window_ms: 60000, max_identical: ${MAX}, replay_max_entries: ${MAX_ENTRIES} }\n`,
    { K: "sk-cloud-key" },
  );
  const tenants = new MemoryTenantStore();
  const keys: string[] = [];
  for (let i = 0; i < KEYS; i++) {
    const { key, record } = generateKey({ role: "call", tenant: "shop", name: `user ${i}`, createdBy: "test" });
    await tenants.putKey(record);
    keys.push(key);
  }
  let redis: TestRedis | undefined;
  let store: LimiterStore = new MemoryLimiter();
  if (limiter === "redis") {
    redis = await testRedis();
    store = new RedisLimiter(redis.redis, { prefix: redis.prefix });
  }
  const logs: Record<string, unknown>[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
  const governor = new Governor({ store, runaway: config.runaway, logger });
  const metrics = new GatewayMetrics();
  const deps: ProcessorDeps = {
    runtime: new Runtime(config),
    logger,
    telemetry: new RequestTelemetry(logger, metrics),
    governance: { auth: createAuthDeps(config, tenants, {}), governor },
  };
  const gateway = await startGatewayPair(deps, cloud.url);
  return {
    cloud,
    gateway,
    governor,
    metrics,
    keys,
    logs,
    close: async () => {
      await gateway.close();
      governor.close();
      await cloud.close();
      await redis?.close();
    },
  };
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A POST from a chosen loopback address (`127.0.0.x`), as a distinct client host would send it. */
function post(url: string, body: unknown, options: { localAddress?: string; key?: string } = {}): Promise<Answer> {
  const data = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: "POST",
        agent: false,
        ...(options.localAddress && { localAddress: options.localAddress }),
        headers: { "content-type": "application/json", "content-length": String(data.length), ...(options.key && { authorization: `Bearer ${options.key}` }) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(data);
  });
}

/** `gearbox_runaway_replays_total`, all tenants. */
async function replays(metrics: GatewayMetrics): Promise<number> {
  const metric = await metrics.registry.getSingleMetric("gearbox_runaway_replays_total")?.get();
  return (metric?.values ?? []).reduce((sum, v) => sum + v.value, 0);
}

const ask = (content: string, stream = false) => ({
  model: "gpt-4.1-nano",
  messages: [{ role: "user" as const, content }],
  max_tokens: 16,
  ...(stream && { stream: true }),
});

for (const limiter of ["memory", "redis"] as const) {
  describe(`runaway protection, ${limiter} limiter`, () => {
    let s: Setup;
    before(async () => {
      s = await setup(limiter);
    });
    after(async () => {
      await s.close();
    });

    for (const transport of ["front door", "envoy + ext_proc"] as const) {
      const base = () => (transport === "front door" ? `http://127.0.0.1:${s.gateway.frontDoor.port}/v1` : `${s.gateway.envoy.url}/v1`);
      const sdk = (key: string) => new OpenAI({ baseURL: base(), apiKey: key, maxRetries: 0 });

      test(`${transport}: ${KEYS} callers with their own keys send one identical prompt: all ${KEYS} reach the provider`, async () => {
        const seen = s.cloud.requests.length;
        const prompt = ask(`Write a short welcome message (${transport}, keys)`);
        const answers = await Promise.all(s.keys.map((key) => sdk(key).chat.completions.create(prompt).withResponse()));
        assert.deepEqual(
          answers.map((a) => a.response.headers.get("x-gearbox-route")),
          answers.map(() => "cloud"),
        );
        assert.equal(s.cloud.requests.length - seen, KEYS);
      });

      test(`${transport}: ${KEYS} keyless callers on distinct source addresses send one identical prompt: all reach the provider`, async () => {
        const seen = s.cloud.requests.length;
        const prompt = ask(`Write a short welcome message (${transport}, addresses)`);
        const answers = await Promise.all(
          Array.from({ length: KEYS }, (_, i) => post(`${base()}/chat/completions`, prompt, { localAddress: `127.0.0.${i + 2}` })),
        );
        assert.deepEqual(
          answers.map((a) => `${a.status} ${String(a.headers["x-gearbox-route"])}`),
          answers.map(() => "200 cloud"),
        );
        assert.equal(s.cloud.requests.length - seen, KEYS);
        // One address looping is still one caller: its repeats past the limit do not reach the provider.
        const more = [];
        for (let i = 0; i < MAX; i++) more.push(await post(`${base()}/chat/completions`, prompt, { localAddress: "127.0.0.2" }));
        assert.equal(s.cloud.requests.length - seen, KEYS + MAX - 1);
        assert.deepEqual(
          more.map((a) => `${a.status} ${String(a.headers["x-gearbox-route"])}`),
          ["200 cloud", "200 cloud", "200 cache"],
        );
        assert.equal(more[MAX - 1]?.headers["x-gearbox-reason"], "runaway_repeat");
      });

      test(`${transport}: one caller looping gets the answer just given (JSON), and the provider sees ${MAX} calls`, async () => {
        const client = sdk(s.keys[0] ?? "");
        const seen = s.cloud.requests.length;
        const replaysBefore = await replays(s.metrics);
        const prompt = ask(`the same request, again and again (${transport})`);
        const raw: { text: string; route: string | null; reason: string | null }[] = [];
        for (let i = 0; i < 12; i++) {
          const response = await client.chat.completions.create(prompt).asResponse();
          raw.push({ text: await response.text(), route: response.headers.get("x-gearbox-route"), reason: response.headers.get("x-gearbox-reason") });
        }
        assert.equal(s.cloud.requests.length - seen, MAX, "the provider saw the first max_identical");
        const last = raw[MAX - 1];
        assert.ok(last && last.route === "cloud");
        for (const replay of raw.slice(MAX)) {
          assert.equal(replay.route, "cache");
          assert.equal(replay.reason, "runaway_repeat");
          assert.equal(replay.text, last.text, "the replay is the bytes of the answer just given");
        }
        // And the SDK reads a replay as the completion it is.
        const parsed = await client.chat.completions.create(prompt);
        assert.deepEqual(parsed, JSON.parse(last.text));
        assert.equal(s.cloud.requests.length - seen, MAX);
        assert.equal((await replays(s.metrics)) - replaysBefore, 12 - MAX + 1, "gearbox_runaway_replays_total");
        const record = s.logs.find((l) => l.runaway === "replayed");
        assert.equal(record?.route, "cache");
        assert.equal(record?.status, 200);
      });

      test(`${transport}: one caller looping on a stream gets the stream just given, as SSE the SDK reads`, async () => {
        const client = sdk(s.keys[1] ?? "");
        const seen = s.cloud.requests.length;
        const prompt = ask(`stream it, again (${transport})`, true);
        const texts: string[] = [];
        const types: (string | null)[] = [];
        for (let i = 0; i < MAX + 3; i++) {
          const response = await client.chat.completions.create({ ...prompt, stream: true }).asResponse();
          types.push(response.headers.get("content-type"));
          texts.push(await response.text());
        }
        assert.equal(s.cloud.requests.length - seen, MAX);
        for (const text of texts.slice(MAX)) assert.equal(text, texts[MAX - 1]);
        assert.ok(
          types.every((t) => t?.startsWith("text/event-stream")),
          types.join(),
        );
        let content = "";
        for await (const chunk of await client.chat.completions.create({ ...prompt, stream: true })) content += chunk.choices[0]?.delta.content ?? "";
        assert.ok(content.length > 0);
        assert.equal(s.cloud.requests.length - seen, MAX);
        // A stream and a whole answer of the same prompt are different requests.
        await client.chat.completions.create({ ...prompt, stream: false });
        assert.equal(s.cloud.requests.length - seen, MAX + 1);
      });

      test(`${transport}: when the answer to replay failed, the repeats are refused with 429 as before`, async () => {
        const client = sdk(s.keys[2] ?? "");
        const seen = s.cloud.requests.length;
        const prompt = ask(`fails on the last one (${transport})`);
        for (let i = 0; i < MAX - 1; i++) await client.chat.completions.create(prompt);
        // A 400 (a 5xx might be retried or failed over by provider resilience).
        s.cloud.queue({ fixture: "vercel-ai/openai/reasoning-model-legacy-parameter-error", status: 400 });
        await assert.rejects(client.chat.completions.create(prompt), (err: { status?: number }) => err.status === 400);
        await assert.rejects(
          client.chat.completions.create(prompt),
          (err: { status?: number; code?: string }) => err.status === 429 && err.code === "runaway_request_loop",
        );
        assert.equal(s.cloud.requests.length - seen, MAX);
      });
    }

    test(`the replay memo stays within replay_max_entries (${MAX_ENTRIES})`, async () => {
      const client = new OpenAI({ baseURL: `http://127.0.0.1:${s.gateway.frontDoor.port}/v1`, apiKey: s.keys[3] ?? "", maxRetries: 0 });
      for (let loop = 0; loop < MAX_ENTRIES * 3; loop++) for (let i = 0; i < MAX; i++) await client.chat.completions.create(ask(`loop ${loop}`));
      assert.equal(s.governor.replays?.size, MAX_ENTRIES);
      assert.equal(s.governor.replays?.inFlight, 0);
    });
  });
}
