/**
 * The data boundary end to end, through the front door and through Envoy (harness) + ext_proc,
 * with the official `openai` SDK as the client: values redacted on the way out and restored on
 * the way back (JSON, a stream whose placeholder is split across chunks, tool-call arguments);
 * a secret blocked with a code naming its category; a confidential request kept on the edge
 * (no cloud call even on an edge failure or a low-confidence edge answer).
 *
 * The cloud here is a model stand-in that answers by quoting what it was sent (as a model asked
 * to repeat the contact details would): its answers carry the placeholders it received, in the
 * shape of the recorded OpenAI fixtures.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { silentLogger } from "../../common/telemetry/logger.ts";
import type { GatewayConfig } from "../../extproc/config/load.ts";
import { Conversations } from "../../extproc/conversation/conversations.ts";
import { MemoryConversationStore } from "../../extproc/conversation/memory-store.ts";
import { startEcho, type Echo } from "../support/quoting-upstream.ts";
import { startOpenAIUpstream, type OpenAIUpstream } from "../emulators/openai-upstream.ts";
import { startEnvoy } from "../harness/envoy.ts";
import { shippedEdgeRoute, shippedEnvoySettings } from "../support/envoy-settings.ts";
import { startTestGateway, testConfig, type TestGateway } from "../support/gateway.ts";
import { startTinyEdgeAgent, type TinyEdgeAgent } from "../support/tiny-edge-agent.ts";

const KEY = "sk-cloud-key";
const EMAIL = "ann.lee@corp-mail.example.com";
const PHONE = "13812345678";

const BOUNDARY = `
data_boundary:
  enable: true
  secrets: block
  pii: redact
  confidential: edge_only
  keywords: [Project Falcon]
`;

type Transport = "front door" | "Envoy + ext_proc";

/** The gateway's conversations, in memory, as `gearbox serve` builds them from `conversations:`. */
function conversationsOf(config: GatewayConfig): Conversations {
  return new Conversations(new MemoryConversationStore({ ttlMs: config.conversations.ttl_ms, maxConversations: 100 }), config.conversations, silentLogger());
}

async function clientOf(transport: Transport, gateway: TestGateway, cloudUrl: string, closers: (() => Promise<void>)[]): Promise<OpenAI> {
  let base = `http://127.0.0.1:${gateway.frontDoor.port}`;
  if (transport === "Envoy + ext_proc") {
    const shipped = shippedEnvoySettings();
    const envoy = await startEnvoy({
      extProc: { ...shipped.extProc, address: gateway.extProcAddress },
      routes: [{ header: "x-gearbox-upstream", value: "openai", cluster: "openai" }, shippedEdgeRoute().route],
      clusters: { openai: { url: cloudUrl }, edge: shippedEdgeRoute().cluster },
    });
    closers.push(() => envoy.close());
    base = envoy.url;
  }
  return new OpenAI({ baseURL: `${base}/v1`, apiKey: "client", maxRetries: 0 });
}

const requestLogs = (g: TestGateway) => g.logs.filter((l) => l.msg === "request");

for (const transport of ["front door", "Envoy + ext_proc"] as const) {
  describe(`data boundary via ${transport}`, () => {
    let echo: Echo;
    let gateway: TestGateway;
    let client: OpenAI;
    const closers: (() => Promise<void>)[] = [];
    before(async () => {
      echo = await startEcho();
      const config = testConfig(`providers:\n  - { name: openai, kind: openai, base_url: '${echo.url}/v1', api_key_env: K }\n${BOUNDARY}`, { K: KEY });
      gateway = await startTestGateway(config, { conversations: conversationsOf(config) });
      client = await clientOf(transport, gateway, echo.url, closers);
    });
    after(async () => {
      for (const close of closers.reverse()) await close();
      await gateway.close();
      await echo.close();
    });

    const noValueLeft = () => {
      for (const b of echo.bodies) assert.ok(!b.includes(EMAIL) && !b.includes(PHONE), `the cloud saw a value: ${b}`);
      const logged = JSON.stringify(gateway.logs);
      assert.ok(!logged.includes(EMAIL) && !logged.includes(PHONE), "a value reached the log");
    };

    test("JSON: values are masked for the cloud and restored for the client; header and log count them", async () => {
      const said = `Mail ${EMAIL} or call ${PHONE}, and ${EMAIL} again`;
      const { data, response } = await client.chat.completions
        .create({
          model: "gpt-4.1-nano",
          messages: [
            { role: "system", content: `Owner: ${EMAIL}` },
            { role: "user", content: said },
          ],
        })
        .withResponse();
      assert.equal(data.choices[0]?.message.content, `You said: ${said}`);
      assert.equal(response.headers.get("x-gearbox-redacted"), "email=3,phone=1");
      const sent = echo.bodies.at(-1) ?? "";
      assert.match(sent, /Mail <EMAIL_1_[0-9a-f]{6}> or call <PHONE_1_[0-9a-f]{6}>, and <EMAIL_1_[0-9a-f]{6}> again/);
      assert.match(sent, /Owner: <EMAIL_1_[0-9a-f]{6}>/);
      const record = requestLogs(gateway).at(-1);
      assert.deepEqual(record?.data_boundary, { action: "redact", counts: { email: 3, phone: 1 } });
      noValueLeft();
    });

    test("stream: a placeholder split across chunks reaches the client whole", async () => {
      const said = `Reach ${EMAIL} today`;
      const stream = await client.chat.completions.create({ model: "gpt-4.1-nano", messages: [{ role: "user", content: said }], stream: true });
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
      assert.equal(text, `You said: ${said}`);
      noValueLeft();
    });

    test("tool-call arguments are restored", async () => {
      const completion = await client.chat.completions.create({
        model: "gpt-4.1-nano",
        messages: [{ role: "user", content: `Notify ${EMAIL}` }],
        tools: [{ type: "function", function: { name: "notify", parameters: { type: "object", properties: { to: { type: "string" } } } } }],
      });
      const call = completion.choices[0]?.message.tool_calls?.[0];
      assert.ok(call?.type === "function");
      assert.deepEqual(JSON.parse(call.function.arguments), { to: EMAIL });
      noValueLeft();
    });

    test("an Anthropic client on an OpenAI backend: JSON and a split stream restored in its own schema", async () => {
      const anthropic = new Anthropic({ baseURL: client.baseURL.replace(/\/v1$/, ""), apiKey: "client", maxRetries: 0 });
      const said = `Write to ${EMAIL} or ${PHONE}`;
      const message = await anthropic.messages.create({ model: "gpt-4.1-nano", max_tokens: 64, messages: [{ role: "user", content: said }] });
      assert.deepEqual(
        message.content.map((b) => (b.type === "text" ? b.text : "")),
        [`You said: ${said}`],
      );
      const stream = anthropic.messages.stream({ model: "gpt-4.1-nano", max_tokens: 64, messages: [{ role: "user", content: said }] });
      let text = "";
      for await (const event of stream) if (event.type === "content_block_delta" && event.delta.type === "text_delta") text += event.delta.text;
      assert.equal(text, `You said: ${said}`);
      noValueLeft();
    });

    test("a conversation's exchange is stored masked (no originals by default); the next turn sends no value", async () => {
      const id = `pii-${transport.replace(/\W+/g, "-")}`;
      const turn = (content: string) =>
        client.chat.completions.create({
          model: "gpt-4.1-nano",
          messages: [{ role: "user", content }],
          ...({ conversation_id: id } as object),
        } as OpenAI.ChatCompletionCreateParamsNonStreaming);
      const first = await turn(`Mail ${EMAIL} tomorrow`);
      assert.equal(first.choices[0]?.message.content, `You said: Mail ${EMAIL} tomorrow`);
      const stored = await (await fetch(`${gateway.baseURL}/conversations/${id}`)).text();
      assert.ok(!stored.includes(EMAIL), `the store kept the value: ${stored}`);
      assert.match(stored, /Mail <EMAIL_1_[0-9a-f]{6}> tomorrow/);
      await turn("And what did I ask first?");
      assert.match(echo.bodies.at(-1) ?? "", /Mail <EMAIL_1_[0-9a-f]{6}> tomorrow/);
      noValueLeft();
    });

    test("a secret is blocked: 403 naming the category, the value neither echoed nor sent", async () => {
      const seen = echo.bodies.length;
      const secret = "sk-proj-Qw3rTy7uIo9pAs1dFg5hJk8lZx";
      await assert.rejects(
        client.chat.completions.create({ model: "gpt-4.1-nano", messages: [{ role: "user", content: `my key is ${secret}` }] }),
        (err: unknown) =>
          err instanceof OpenAI.APIError && err.status === 403 && err.code === "data_boundary_secret" && !JSON.stringify(err.error).includes(secret),
      );
      assert.equal(echo.bodies.length, seen);
      assert.ok(!JSON.stringify(gateway.logs).includes(secret));
    });

    test("a confidential request with no edge is refused, never sent to the cloud, whatever the route header says", async () => {
      const seen = echo.bodies.length;
      for (const route of ["auto", "cloud"]) {
        await assert.rejects(
          client.chat.completions.create(
            { model: "gpt-4.1-nano", messages: [{ role: "user", content: "Project Falcon launch date?" }] },
            { headers: { "x-gearbox-route": route } },
          ),
          (err: unknown) => err instanceof OpenAI.APIError && err.status === 503 && err.code === "data_boundary_edge_only",
        );
      }
      assert.equal(echo.bodies.length, seen);
    });
  });
}

test("a tenant that keeps originals gets its conversation stored as the client sent it", async () => {
  const echo = await startEcho();
  const config = testConfig(
    `providers:\n  - { name: openai, kind: openai, base_url: '${echo.url}/v1', api_key_env: K }\n${BOUNDARY}` +
      "conversations:\n  tenants:\n    default: { keep_originals: true }\n",
    { K: KEY },
  );
  const gateway = await startTestGateway(config, { conversations: conversationsOf(config) });
  try {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: "client", maxRetries: 0 });
    await client.chat.completions.create({
      model: "gpt-4.1-nano",
      messages: [{ role: "user", content: `Mail ${EMAIL}` }],
      ...({ conversation_id: "kept" } as object),
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const stored = (await (await fetch(`${gateway.baseURL}/conversations/kept`)).json()) as { messages: { content: string }[] };
    assert.deepEqual(
      stored.messages.map((m) => m.content),
      [`Mail ${EMAIL}`, `You said: Mail ${EMAIL}`],
    );
    // What left for the cloud was still masked.
    assert.ok(!(echo.bodies.at(-1) ?? "").includes(EMAIL));
  } finally {
    await gateway.close();
    await echo.close();
  }
});

describe("edge_only with an edge agent: never the cloud, on a low-confidence answer or a failing edge", () => {
  let agent: TinyEdgeAgent;
  let cloud: OpenAIUpstream;
  before(async () => {
    agent = await startTinyEdgeAgent();
    cloud = await startOpenAIUpstream({ apiKey: KEY });
  });
  after(async () => {
    await agent.close();
    await cloud.close();
  });

  for (const transport of ["front door", "Envoy + ext_proc"] as const) {
    for (const edge of ["low confidence", "unreachable"] as const) {
      test(`${transport}, ${edge} edge`, async () => {
        const address = edge === "unreachable" ? "127.0.0.1:9" : `127.0.0.1:${agent.port}`;
        const gateway = await startTestGateway(
          testConfig(
            `providers:\n  - { name: openai, kind: openai, base_url: '${cloud.baseURL}', api_key_env: K }\n` +
              `edge:\n  agents: [{ address: '${address}', models: [tiny] }]\n  default_model: tiny\n  fallback_model: gpt-4.1-nano\n` +
              // Any edge answer is weak: without the boundary, every one would be upgraded to the cloud.
              `route:\n  fallback: { enable: true, confidence_threshold: 0.9999 }\n${BOUNDARY}`,
            { K: KEY },
          ),
        );
        const closers: (() => Promise<void>)[] = [];
        try {
          const client = await clientOf(transport, gateway, cloud.url, closers);
          const seen = cloud.requests.length;
          const ask = { model: "tiny", messages: [{ role: "user" as const, content: "Summarize the Project Falcon memo" }], max_tokens: 4, temperature: 0 };
          if (edge === "low confidence") {
            const { data, response } = await client.chat.completions.create(ask).withResponse();
            assert.equal(response.headers.get("x-gearbox-route"), "edge");
            assert.equal(typeof data.choices[0]?.message.content, "string");
          } else {
            await assert.rejects(client.chat.completions.create(ask), (err: unknown) => err instanceof OpenAI.APIError && err.status >= 500);
          }
          // Asked for a cloud model too: still the edge.
          await client.chat.completions.create({ ...ask, model: "gpt-4.1-nano" }).catch(() => undefined);
          assert.equal(cloud.requests.length, seen, "a confidential request reached the cloud");
          const records = requestLogs(gateway);
          assert.ok(records.length >= 2);
          for (const r of records) assert.equal((r.data_boundary as { action?: string } | undefined)?.action, "edge_only");
        } finally {
          for (const close of closers.reverse()) await close();
          await gateway.close();
        }
      });
    }
  }
});
