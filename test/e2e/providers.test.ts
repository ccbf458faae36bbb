/**
 * Every backend protocol, through both transports (front door; Envoy harness + ext_proc), with
 * the official SDKs as clients: OpenAI SDK (text, streams, tool calls) and Anthropic SDK
 * (`/v1/messages`) served by non-Anthropic backends. Provider keys are injected by Gearbox and
 * never seen by clients; the client's key never reaches a provider.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startEnvoy } from "../harness/envoy.ts";
import { shippedEnvoySettings } from "../support/envoy-settings.ts";
import { startTestGateway, testConfig, type TestGateway } from "../support/gateway.ts";
import { BACKENDS, PROVIDER_KEY, type RunningBackend } from "./provider-cases.ts";

const CLIENT_KEY = "gbx-client-call-key-91c2";
const WEATHER_TOOL: OpenAI.ChatCompletionTool = {
  type: "function",
  function: { name: "weather", description: "Weather for a place", parameters: { type: "object", properties: { location: { type: "string" } } } },
};

type Transport = "front door" | "envoy + ext_proc";

async function baseURLFor(transport: Transport, gateway: TestGateway, backend: RunningBackend, closers: (() => Promise<void>)[]): Promise<string> {
  if (transport === "front door") return `http://127.0.0.1:${gateway.frontDoor.port}`;
  const shipped = shippedEnvoySettings();
  const envoy = await startEnvoy({
    extProc: { ...shipped.extProc, address: gateway.extProcAddress },
    routes: [{ header: "x-gearbox-upstream", value: backend.providerName, cluster: backend.providerName }],
    clusters: { [backend.providerName]: { url: backend.origin } },
    bufferLimitBytes: shipped.bufferLimitBytes ?? 8 * 1024 * 1024,
  });
  closers.push(() => envoy.close());
  return envoy.url;
}

for (const backendCase of BACKENDS) {
  for (const transport of ["front door", "envoy + ext_proc"] as const) {
    describe(`${backendCase.name} backend via ${transport}`, () => {
      let backend: RunningBackend;
      let gateway: TestGateway;
      let openai: OpenAI;
      let anthropic: Anthropic;
      const closers: (() => Promise<void>)[] = [];

      before(async () => {
        backend = await backendCase.start();
        gateway = await startTestGateway(testConfig(`providers:\n${backend.providerYaml}`, { TEST_PROVIDER_KEY: PROVIDER_KEY }));
        const base = await baseURLFor(transport, gateway, backend, closers);
        openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: CLIENT_KEY, maxRetries: 0 });
        anthropic = new Anthropic({ baseURL: base, apiKey: CLIENT_KEY, maxRetries: 0 });
      });
      after(async () => {
        for (const close of closers) await close();
        await gateway.close();
        await backend.close();
        assert.ok(!backend.receivedHeaderValues().some((v) => v.includes(CLIENT_KEY)), "the client's key never reaches the provider");
      });

      test("OpenAI SDK: text", async () => {
        const expected = backend.queueText(false);
        const { data, response } = await openai.chat.completions
          .create({
            model: backendCase.model,
            messages: [
              { role: "system", content: "Be brief." },
              { role: "user", content: "Hello" },
            ],
          })
          .withResponse();
        assert.equal(data.choices[0]?.message.content, expected);
        assert.equal(data.object, "chat.completion");
        assert.ok((data.usage?.total_tokens ?? 0) > 0);
        assert.equal(response.headers.get("x-gearbox-route"), "cloud");
        for (const [, value] of response.headers) assert.ok(!value.includes(PROVIDER_KEY), "no provider key in response headers");
      });

      test("OpenAI SDK: streamed text (split SSE/NDJSON writes), usage on request", async () => {
        const expected = backend.queueText(true);
        const stream = await openai.chat.completions.create({
          model: backendCase.model,
          messages: [{ role: "user", content: "Hello" }],
          stream: true,
          stream_options: { include_usage: true },
        });
        let text = "";
        let usage: OpenAI.CompletionUsage | null | undefined;
        let finish: string | null | undefined;
        for await (const chunk of stream) {
          text += chunk.choices[0]?.delta.content ?? "";
          finish = chunk.choices[0]?.finish_reason ?? finish;
          usage = chunk.usage ?? usage;
        }
        assert.equal(text, expected);
        assert.ok(finish === "stop" || finish === "length", `finish ${String(finish)}`);
        assert.ok(usage && usage.total_tokens >= 0);
      });

      test("OpenAI SDK: tool call", async () => {
        const expected = backend.queueToolCall(false);
        const res = await openai.chat.completions.create({
          model: backendCase.model,
          messages: [{ role: "user", content: "Weather?" }],
          tools: [WEATHER_TOOL],
        });
        const call = res.choices[0]?.message.tool_calls?.[0];
        assert.ok(call?.type === "function");
        assert.equal(call.function.name, expected.name);
        assert.deepEqual(JSON.parse(call.function.arguments), expected.args);
        assert.equal(res.choices[0]?.finish_reason, "tool_calls");
      });

      test("OpenAI SDK: streamed tool call, argument deltas reassembled by the SDK's stream helper", async () => {
        const expected = backend.queueToolCall(true);
        const runner = openai.chat.completions.stream({ model: backendCase.model, messages: [{ role: "user", content: "Weather?" }], tools: [WEATHER_TOOL] });
        const final = await runner.finalChatCompletion();
        const call = final.choices[0]?.message.tool_calls?.[0];
        assert.ok(call?.type === "function");
        assert.equal(call.function.name, expected.name);
        assert.deepEqual(JSON.parse(call.function.arguments), expected.args);
      });

      if (backendCase.name !== "anthropic") {
        test("Anthropic SDK on /v1/messages: text and stream", async () => {
          const expected = backend.queueText(false);
          const message = await anthropic.messages.create({ model: backendCase.model, max_tokens: 256, messages: [{ role: "user", content: "Hello" }] });
          assert.equal(message.content.map((b) => (b.type === "text" ? b.text : "")).join(""), expected);
          const expectedStream = backend.queueText(true);
          const final = await anthropic.messages
            .stream({ model: backendCase.model, max_tokens: 256, messages: [{ role: "user", content: "Hello" }] })
            .finalMessage();
          assert.equal(final.content.map((b) => (b.type === "text" ? b.text : "")).join(""), expectedStream);
          assert.ok(final.stop_reason === "end_turn" || final.stop_reason === "max_tokens");
        });

        test("Anthropic SDK on /v1/messages: tool use", async () => {
          const expected = backend.queueToolCall(false);
          const message = await anthropic.messages.create({
            model: backendCase.model,
            max_tokens: 256,
            messages: [{ role: "user", content: "Weather?" }],
            tools: [{ name: "weather", input_schema: { type: "object", properties: { location: { type: "string" } } } }],
          });
          const block = message.content.find((b) => b.type === "tool_use");
          assert.ok(block?.type === "tool_use");
          assert.equal(block.name, expected.name);
          assert.deepEqual(block.input, expected.args);
          assert.equal(message.stop_reason, "tool_use");
        });
      } else {
        test("Anthropic SDK on /v1/messages: passed through to Anthropic unchanged", async () => {
          const expected = backend.queueText(false);
          const message = await anthropic.messages.create({ model: backendCase.model, max_tokens: 256, messages: [{ role: "user", content: "Hello" }] });
          assert.equal(message.content.map((b) => (b.type === "text" ? b.text : "")).join(""), expected);
        });
      }
    });
  }
}
