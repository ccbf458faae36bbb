/** Headers of the client's API (and SDK telemetry) reach only a provider of that API. */
import assert from "node:assert/strict";
import { test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startOpenAIUpstream } from "../emulators/openai-upstream.ts";
import { openAIProviderYaml, startTestGateway, testConfig } from "../support/gateway.ts";

test("an Anthropic SDK call translated to OpenAI sends no anthropic-* or x-stainless-* header; an OpenAI SDK call keeps its own", async () => {
  const upstream = await startOpenAIUpstream({ apiKey: "sk-h" });
  const gateway = await startTestGateway(testConfig(openAIProviderYaml(upstream.baseURL), { TEST_PROVIDER_KEY: "sk-h" }));
  try {
    const anthropic = new Anthropic({ baseURL: gateway.baseURL.replace("/v1", ""), apiKey: "app", maxRetries: 0 });
    await anthropic.messages.create(
      { model: "gpt-4o-mini", max_tokens: 16, messages: [{ role: "user", content: "hi" }] },
      { headers: { "anthropic-beta": "x-1" } },
    );
    const translated = Object.keys(upstream.requests.at(-1)?.headers ?? {});
    assert.deepEqual(
      translated.filter((h) => h.startsWith("anthropic-") || h.startsWith("x-stainless-")),
      [],
    );
    const openai = new OpenAI({ baseURL: gateway.baseURL, apiKey: "app", maxRetries: 0 });
    await openai.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
    const same = Object.keys(upstream.requests.at(-1)?.headers ?? {});
    assert.ok(
      same.some((h) => h.startsWith("x-stainless-")),
      "a same-API hop forwards the SDK's headers as they are",
    );
  } finally {
    await gateway.close();
    await upstream.close();
  }
});

test("the OpenAI SDK's organization and project belong to the client's key: never sent upstream; the provider's own go with Gearbox's key", async () => {
  const upstream = await startOpenAIUpstream({ apiKey: "sk-h" });
  const plain = await startTestGateway(testConfig(openAIProviderYaml(upstream.baseURL), { TEST_PROVIDER_KEY: "sk-h" }));
  const scoped = await startTestGateway(
    testConfig(
      `providers:\n  - { name: openai, kind: openai, base_url: '${upstream.baseURL}', api_key_env: K, organization: org-gearbox, project: proj_gearbox }\n`,
      { K: "sk-h" },
    ),
  );
  try {
    const ask = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "hi" }] };
    const seen = () => {
      const h = upstream.requests.at(-1)?.headers ?? {};
      return [h.authorization, h["openai-organization"], h["openai-project"]];
    };
    for (const [gateway, expected] of [
      [plain, ["Bearer sk-h", undefined, undefined]],
      [scoped, ["Bearer sk-h", "org-gearbox", "proj_gearbox"]],
    ] as const) {
      const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: "app", organization: "org-client", project: "proj_client", maxRetries: 0 });
      await client.chat.completions.create(ask);
      assert.deepEqual(seen(), expected);
    }
  } finally {
    await plain.close();
    await scoped.close();
    await upstream.close();
  }
});

test("Gearbox's routing headers are Envoy's: the front door, like Envoy's routes, sends neither to a provider nor to an edge agent", async () => {
  const upstream = await startOpenAIUpstream({ apiKey: "sk-h" });
  const agent = await startOpenAIUpstream();
  const edge = `edge:\n  agents: [{ address: '127.0.0.1:${agent.port}', models: [tiny] }]\n  default_model: tiny\n`;
  const gateway = await startTestGateway(testConfig(edge + openAIProviderYaml(upstream.baseURL), { TEST_PROVIDER_KEY: "sk-h" }));
  try {
    const openai = new OpenAI({ baseURL: gateway.baseURL, apiKey: "app", maxRetries: 0 });
    const cloud = await openai.chat.completions
      .create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }, { headers: { "x-gearbox-route": "cloud" } })
      .withResponse();
    const toProvider = upstream.requests.at(-1)?.headers;
    const onEdge = await openai.chat.completions
      .create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }, { headers: { "x-gearbox-route": "edge" } })
      .withResponse();
    assert.equal(cloud.response.headers.get("x-gearbox-route"), "cloud");
    assert.equal(onEdge.response.headers.get("x-gearbox-route"), "edge");
    for (const [who, seen] of [
      ["provider", toProvider],
      ["edge agent", agent.requests.at(-1)?.headers],
    ] as const) {
      assert.ok(seen, `the ${who} was called`);
      assert.equal(seen["x-gearbox-upstream"], undefined, `no routing header reaches the ${who}`);
      assert.equal(seen["x-gearbox-edge-endpoint"], undefined, `no edge endpoint reaches the ${who}`);
    }
    assert.equal(typeof toProvider?.["x-gearbox-request-id"], "string", "the provider gets the request's id, as through Envoy");
  } finally {
    await gateway.close();
    await upstream.close();
    await agent.close();
  }
});
