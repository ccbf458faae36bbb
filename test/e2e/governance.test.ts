/**
 * Governance end to end, on real Redis: the gateway (front door, and Envoy harness + ext_proc)
 * with tenants from the config, call keys stored hashed in Redis, limits on Redis, and the
 * OpenAI SDK as the client. A caller without a key, with an unknown key, from outside its
 * tenant's addresses or asking for a model it may not use is refused with the right status;
 * a rate limit answers 429 naming the limit with `retry-after`; a retry loop of identical
 * requests reaches the provider only `runaway.max_identical` times (the rest are answered with
 * the answer just given).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import { ApiError, GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { createAuthDeps } from "../../extproc/governance/auth.ts";
import { Governor } from "../../extproc/governance/governor.ts";
import { generateKey } from "../../extproc/governance/keys.ts";
import type { FrontDoor } from "../../extproc/http/front-door.ts";
import type { ProcessorDeps } from "../../extproc/processor/processor.ts";
import { createLimiterStore, type LimiterSetup } from "../../extproc/store/create-limiter.ts";
import { RedisTenantStore } from "../../extproc/store/redis-tenant-store.ts";
import { testRedis, type TestRedis } from "../../extproc/store/test-redis.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import { startOpenAIUpstream, type OpenAIUpstream } from "../emulators/openai-upstream.ts";
import type { EnvoyHarness } from "../harness/envoy.ts";
import { startGatewayPair, testConfig, type GatewayPair } from "../support/gateway.ts";
import { Runtime } from "../../extproc/runtime/runtime.ts";

const KEY = "sk-cloud-key";
const ASK = { model: "gpt-4.1-nano", messages: [{ role: "user" as const, content: "Say hi" }], max_tokens: 8 };

let redis: TestRedis;
let cloud: OpenAIUpstream;
let limiter: LimiterSetup;
let governor: Governor;
let frontDoor: FrontDoor;
let gateway: GatewayPair;
let envoy: EnvoyHarness;
const keys: Record<string, string> = {};

before(async () => {
  redis = await testRedis();
  cloud = await startOpenAIUpstream({ apiKey: KEY });
  const config = testConfig(
    `providers:\n  - { name: openai, kind: openai, base_url: '${cloud.baseURL}', api_key_env: K }\n` +
      `tenants:\n` +
      `  - { id: shop, limits: { requests_per_second: 3 } }\n` +
      `  - { id: far, ip_allowlist: [10.0.0.0/8] }\n` +
      `  - { id: narrow, models: [gpt-4o] }\n` +
      `  - { id: loop }\n` +
      `runaway: { window_ms: 60000, max_identical: 3 }\n`,
    { K: KEY },
  );
  const store = new RedisTenantStore(redis.redis, redis.prefix);
  for (const tenant of ["shop", "far", "narrow", "loop"]) {
    const { key, record } = generateKey({ role: "call", tenant, name: `${tenant} app`, createdBy: "test" });
    await store.putKey(record);
    keys[tenant] = key;
  }
  limiter = createLimiterStore({ redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379", logger: silentLogger(), prefix: redis.prefix });
  governor = new Governor({ store: limiter.store, runaway: config.runaway, logger: silentLogger() });
  const deps: ProcessorDeps = { runtime: new Runtime(config), logger: silentLogger(), governance: { auth: createAuthDeps(config, store, {}), governor } };
  gateway = await startGatewayPair(deps, cloud.url);
  ({ frontDoor, envoy } = gateway);
});

after(async () => {
  await gateway.close();
  governor.close();
  limiter.close();
  await cloud.close();
  await redis.close();
});

const client = (apiKey: string, base = `http://127.0.0.1:${frontDoor.port}/v1`) => new OpenAI({ baseURL: base, apiKey, maxRetries: 0 });

async function statusOf(promise: Promise<unknown>): Promise<{ status: number; code?: string; message?: string; headers?: Headers }> {
  try {
    await promise;
    return { status: 200 };
  } catch (err) {
    const e = err as { status?: number; code?: string; message?: string; headers?: Headers };
    return {
      status: e.status ?? 0,
      ...(e.code !== undefined && { code: e.code }),
      ...(e.message !== undefined && { message: e.message }),
      ...(e.headers !== undefined && { headers: e.headers }),
    };
  }
}

for (const transport of ["front door", "envoy + ext_proc"] as const) {
  describe(`via ${transport}`, () => {
    const base = () => (transport === "front door" ? `http://127.0.0.1:${frontDoor.port}/v1` : `${envoy.url}/v1`);

    test("no key, an unknown key, or a key of the wrong shape: 401, nothing sent upstream", async () => {
      const seen = cloud.requests.length;
      const anonymous = await fetch(`${base()}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(ASK),
      });
      assert.equal(anonymous.status, 401);
      assert.match(((await anonymous.json()) as { error: { message: string } }).error.message, /didn't provide an API key/, "as OpenAI says it");
      assert.equal((await statusOf(client("gbx_call_thisKeyWasNeverIssuedToAnyoneAtAllxxxxxxxxxx", base()).chat.completions.create(ASK))).status, 401);
      assert.equal(cloud.requests.length, seen);
    });

    test("a valid call key: the call goes through, and the provider never sees the caller's key", async () => {
      const seen = cloud.requests.length;
      const { response } = await client(keys.loop ?? "", base())
        .chat.completions.create({ ...ASK, messages: [{ role: "user", content: `hello from ${transport}` }] })
        .withResponse();
      assert.equal(response.status, 200);
      assert.equal(cloud.requests[seen]?.headers.authorization, `Bearer ${KEY}`);
    });

    test("Anthropic's and Google's SDKs present the call key their own way (x-api-key, x-goog-api-key): answered; a wrong key is their SDK's 401", async () => {
      const root = base().replace(/\/v1$/, "");
      const seen = cloud.requests.length;
      const claude = (apiKey: string) => new Anthropic({ baseURL: root, apiKey, maxRetries: 0 });
      const gemini = (apiKey: string) => new GoogleGenAI({ apiKey, httpOptions: { baseUrl: root } });
      const said = await claude(keys.loop ?? "").messages.create({
        model: "gpt-4.1-nano",
        max_tokens: 8,
        messages: [{ role: "user", content: `claude via ${transport}` }],
      });
      assert.equal(said.type, "message");
      const google = await gemini(keys.loop ?? "").models.generateContent({ model: "gpt-4.1-nano", contents: `gemini via ${transport}` });
      assert.ok(google.candidates?.length);
      assert.equal(cloud.requests.length, seen + 2);
      for (const request of cloud.requests.slice(seen)) {
        assert.equal(request.headers.authorization, `Bearer ${KEY}`);
        assert.equal(request.headers["x-api-key"], undefined);
        assert.equal(request.headers["x-goog-api-key"], undefined);
      }
      const wrong = "gbx_call_thisKeyWasNeverIssuedToAnyoneAtAllxxxxxxxxxx";
      await assert.rejects(
        claude(wrong).messages.create({ model: "gpt-4.1-nano", max_tokens: 8, messages: [{ role: "user", content: "hi" }] }),
        (err: unknown) => err instanceof Anthropic.AuthenticationError && (err.error as { error: { type: string } }).error.type === "authentication_error",
      );
      await assert.rejects(
        gemini(wrong).models.generateContent({ model: "gpt-4.1-nano", contents: "hi" }),
        (err: unknown) => err instanceof ApiError && err.status === 401,
      );
      assert.equal(cloud.requests.length, seen + 2, "nothing upstream for a wrong key");
      // Google's REST convention, the key in the query: read as the call key, never sent on.
      const byQuery = await fetch(`${root}/v1beta/models/gpt-4.1-nano:generateContent?key=${keys.loop ?? ""}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: `query key via ${transport}` }] }] }),
      });
      assert.equal(byQuery.status, 200);
      assert.equal(cloud.requests.length, seen + 3);
      assert.equal(cloud.requests.at(-1)?.url, "/v1/chat/completions", "neither the key nor Gemini's query goes to an OpenAI provider");
    });

    test("outside the tenant's IP allowlist: 403; a model the tenant may not use: 403", async () => {
      const far = await statusOf(client(keys.far ?? "", base()).chat.completions.create(ASK));
      assert.equal(far.status, 403);
      assert.equal(far.code, "ip_not_allowed");
      const narrow = await statusOf(client(keys.narrow ?? "", base()).chat.completions.create(ASK));
      assert.equal(narrow.status, 403);
      assert.equal(narrow.code, "model_not_allowed");
    });
  });
}

test("requests per second: over the tenant's limit → 429 naming it, with retry-after", async () => {
  const shop = client(keys.shop ?? "");
  const results = await Promise.all(
    Array.from({ length: 8 }, (_, i) => statusOf(shop.chat.completions.create({ ...ASK, messages: [{ role: "user", content: `rate ${i}` }] }))),
  );
  const limited = results.filter((r) => r.status === 429);
  assert.ok(results.filter((r) => r.status === 200).length <= 3, `at most 3 admitted in the second: ${results.map((r) => r.status).join(",")}`);
  assert.ok(limited.length >= 5);
  assert.equal(limited[0]?.code, "rate_limit_requests_per_second");
  assert.match(limited[0]?.message ?? "", /requests_per_second|requests per second/i);
  assert.match(limited[0]?.message ?? "", /shop/);
  assert.ok(Number(limited[0]?.headers?.get("retry-after")) >= 1);
});

test("a retry loop: identical requests reach the provider only max_identical times; the rest get the answer just given", async () => {
  const loop = client(keys.loop ?? "");
  const seen = cloud.requests.length;
  const same = { ...ASK, messages: [{ role: "user" as const, content: "the same request, again and again" }] };
  const results: number[] = [];
  for (let i = 0; i < 40; i++) results.push((await statusOf(loop.chat.completions.create(same))).status);
  assert.equal(results.filter((s) => s === 200).length, 40);
  assert.equal(cloud.requests.length - seen, 3, "the provider saw 3 of 40");
  const replayed = await loop.chat.completions.create(same).withResponse();
  assert.equal(replayed.response.headers.get("x-gearbox-reason"), "runaway_repeat");
});
