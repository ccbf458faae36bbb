/**
 * The exact response cache end to end: the gateway (front door, and Envoy harness + ext_proc)
 * with governance (two tenants, call keys), the cache on, an OpenAI emulator upstream and the
 * OpenAI SDK as the client. An identical repeatable request is answered from the cache (no
 * upstream call, `x-gearbox-route: cache`, cost 0 in the log); a streamed request is replayed as
 * SSE the SDK parses to the same text; `x-gearbox-cache: bypass`, another tenant, model or
 * system prompt go upstream.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import { pino } from "pino";
import { MemoryResponseCache } from "../../extproc/cache/memory-response-cache.ts";
import { createAuthDeps } from "../../extproc/governance/auth.ts";
import { Governor } from "../../extproc/governance/governor.ts";
import { generateKey } from "../../extproc/governance/keys.ts";
import type { FrontDoor } from "../../extproc/http/front-door.ts";
import type { ProcessorDeps } from "../../extproc/processor/processor.ts";
import { MemoryLimiter } from "../../extproc/store/memory-limiter.ts";
import { MemoryTenantStore } from "../../extproc/store/memory-tenant-store.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import { startOpenAIUpstream, type OpenAIUpstream } from "../emulators/openai-upstream.ts";
import type { EnvoyHarness } from "../harness/envoy.ts";
import { startGatewayPair, testConfig, type GatewayPair } from "../support/gateway.ts";
import { Runtime } from "../../extproc/runtime/runtime.ts";

const KEY = "sk-cloud-key";

let cloud: OpenAIUpstream;
let governor: Governor;
let frontDoor: FrontDoor;
let gateway: GatewayPair;
let envoy: EnvoyHarness;
const logs: Record<string, unknown>[] = [];
const keys: Record<string, string> = {};

before(async () => {
  cloud = await startOpenAIUpstream({ apiKey: KEY });
  const config = testConfig(
    `providers:\n  - { name: openai, kind: openai, base_url: '${cloud.baseURL}', api_key_env: K }\n` +
      `tenants:\n  - { id: shop }\n  - { id: other }\n` +
      `cache: { exact: { enable: true } }\n`,
    { K: KEY },
  );
  const store = new MemoryTenantStore();
  for (const tenant of ["shop", "other"]) {
    const { key, record } = generateKey({ role: "call", tenant, name: `${tenant} app`, createdBy: "test" });
    await store.putKey(record);
    keys[tenant] = key;
  }
  governor = new Governor({ store: new MemoryLimiter(), runaway: config.runaway, logger: silentLogger() });
  const logger = pino({ level: "info" }, { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
  const deps: ProcessorDeps = {
    runtime: new Runtime(config),
    logger,
    governance: { auth: createAuthDeps(config, store, {}), governor },
    cache: new MemoryResponseCache(config.cache.exact.max_bytes),
  };
  gateway = await startGatewayPair(deps, cloud.url);
  ({ frontDoor, envoy } = gateway);
});

after(async () => {
  await gateway.close();
  governor.close();
  await cloud.close();
});

const lastLog = () => logs.findLast((l) => l.msg === "request");

for (const transport of ["front door", "envoy + ext_proc"] as const) {
  describe(`via ${transport}`, () => {
    const client = (tenant = "shop") =>
      new OpenAI({
        baseURL: transport === "front door" ? `http://127.0.0.1:${frontDoor.port}/v1` : `${envoy.url}/v1`,
        apiKey: keys[tenant] ?? "",
        maxRetries: 0,
      });
    const ask = (question: string) => ({
      model: "gpt-4.1-nano",
      messages: [
        { role: "system" as const, content: "You are terse." },
        { role: "user" as const, content: `${question} (${transport})` },
      ],
      temperature: 0,
    });

    test("an identical request is answered from the cache: no upstream call, route cache, cost 0", async () => {
      const seen = cloud.requests.length;
      const first = await client().chat.completions.create(ask("Say hi")).withResponse();
      assert.equal(first.response.headers.get("x-gearbox-route"), "cloud");
      assert.equal(lastLog()?.cache, "miss");
      assert.equal(cloud.requests.length, seen + 1);
      const second = await client().chat.completions.create(ask("Say hi")).withResponse();
      assert.equal(cloud.requests.length, seen + 1, "the provider was not called again");
      assert.equal(second.response.headers.get("x-gearbox-route"), "cache");
      assert.equal(second.response.headers.get("x-gearbox-cache"), "hit");
      assert.ok(second.response.headers.get("x-gearbox-request-id"));
      assert.deepEqual(second.data, first.data, "the stored completion, as it was");
      const line = lastLog();
      assert.equal(line?.cache, "hit");
      assert.equal(line?.route, "cache");
      assert.equal(line?.cost_usd, 0);
    });

    test("a streamed request after a plain one is replayed as SSE the SDK parses to the same text", async () => {
      const plain = await client().chat.completions.create(ask("Stream me"));
      const seen = cloud.requests.length;
      const { data: stream, response } = await client()
        .chat.completions.create({ ...ask("Stream me"), stream: true, stream_options: { include_usage: true } })
        .withResponse();
      assert.equal(response.headers.get("x-gearbox-route"), "cache");
      assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
      let text = "";
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? "";
        usage = chunk.usage ?? usage;
      }
      assert.ok(text.length > 0);
      assert.equal(text, plain.choices[0]?.message.content);
      assert.deepEqual(usage, plain.usage);
      assert.equal(cloud.requests.length, seen);
    });

    test("a streamed answer is stored once complete: a plain repeat gets the same text from the cache", async () => {
      const seen = cloud.requests.length;
      const stream = await client().chat.completions.create({ ...ask("Stream first"), stream: true });
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
      assert.equal(cloud.requests.length, seen + 1);
      const { data, response } = await client().chat.completions.create(ask("Stream first")).withResponse();
      assert.equal(response.headers.get("x-gearbox-route"), "cache");
      assert.equal(data.choices[0]?.message.content, text);
      assert.equal(cloud.requests.length, seen + 1);
    });

    test("x-gearbox-cache: bypass, another tenant, another model, another system prompt: upstream", async () => {
      await client().chat.completions.create(ask("Scoped"));
      const seen = cloud.requests.length;
      const bypass = await client()
        .chat.completions.create(ask("Scoped"), { headers: { "x-gearbox-cache": "bypass" } })
        .withResponse();
      assert.equal(bypass.response.headers.get("x-gearbox-route"), "cloud");
      assert.equal(lastLog()?.cache, "bypass");
      const other = await client("other").chat.completions.create(ask("Scoped")).withResponse();
      assert.equal(other.response.headers.get("x-gearbox-route"), "cloud", "another tenant");
      const model = await client()
        .chat.completions.create({ ...ask("Scoped"), model: "gpt-4o" })
        .withResponse();
      assert.equal(model.response.headers.get("x-gearbox-route"), "cloud", "another model");
      const system = ask("Scoped");
      const prompt = await client()
        .chat.completions.create({
          ...system,
          messages: [{ role: "system", content: "You are verbose." }, system.messages[1] ?? { role: "user", content: "" }],
        })
        .withResponse();
      assert.equal(prompt.response.headers.get("x-gearbox-route"), "cloud", "another system prompt");
      assert.equal(cloud.requests.length, seen + 4);
    });

    test("a sampling request (temperature unset) is not cached", async () => {
      const { temperature: _, ...sampled } = ask("Sampled");
      await client().chat.completions.create(sampled);
      const seen = cloud.requests.length;
      const again = await client().chat.completions.create(sampled).withResponse();
      assert.equal(again.response.headers.get("x-gearbox-route"), "cloud");
      assert.equal(cloud.requests.length, seen + 1);
    });
  });
}
