/**
 * The OpenAI Responses API through Gearbox, with the official `openai` SDK as the client
 * (`responses.create`, streamed and not, and `responses.stream`), through the front door and
 * through the Envoy harness: answers replayed from recorded provider traffic (OpenAI Chat
 * Completions, Gemini), a tool loop continued with `previous_response_id`, and bad inputs.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import { startEnvoy } from "../harness/envoy.ts";
import { loadChunkFixture, loadJsonFixture } from "../emulators/fixtures.ts";
import { startGeminiUpstream, type GeminiUpstream } from "../emulators/gemini-upstream.ts";
import { startOpenAIUpstream, type OpenAIUpstream } from "../emulators/openai-upstream.ts";
import { shippedEnvoySettings } from "../support/envoy-settings.ts";
import { startTestGateway, testConfig, type TestGateway } from "../support/gateway.ts";

type Json = Record<string, unknown>;
const TOOL = {
  type: "function" as const,
  name: "weather",
  description: "Weather by city",
  parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
  strict: false,
};

/** Independent oracle: the recorded Chat Completions text. */
function recordedText(): string {
  const json = loadJsonFixture("vercel-ai/openai/openai-text") as { choices: { message: { content: string } }[] };
  return json.choices[0]?.message.content ?? "";
}

/** Independent oracle: the recorded streamed text, delta by delta. */
function recordedStreamText(): string {
  return (loadChunkFixture("vercel-ai/openai/openai-text") as { choices?: { delta?: { content?: string } }[] }[])
    .map((c) => c.choices?.[0]?.delta?.content ?? "")
    .join("");
}

function recordedCall(name: string): { args: unknown; signature: string | undefined } {
  const json = loadJsonFixture(name) as { candidates: { content: { parts: { functionCall?: { args: unknown }; thoughtSignature?: string }[] } }[] };
  const part = json.candidates[0]?.content.parts.find((p) => p.functionCall !== undefined);
  return { args: part?.functionCall?.args, signature: part?.thoughtSignature };
}

for (const entry of ["front door", "Envoy + ext_proc"] as const) {
  describe(`Responses API via ${entry}`, () => {
    let openaiUp: OpenAIUpstream;
    let geminiUp: GeminiUpstream;
    let gateway: TestGateway;
    let client: OpenAI;
    let closeEnvoy = () => Promise.resolve();

    before(async () => {
      openaiUp = await startOpenAIUpstream();
      geminiUp = await startGeminiUpstream();
      gateway = await startTestGateway(
        testConfig(`providers:
  - { name: openai, kind: openai, base_url: '${openaiUp.baseURL}', models: [gpt-replay], default: true }
  - { name: gemini, kind: gemini, base_url: '${geminiUp.baseURL}', models: [gemini-3-pro-preview] }
`),
      );
      let base = `http://127.0.0.1:${gateway.frontDoor.port}`;
      if (entry === "Envoy + ext_proc") {
        const shipped = shippedEnvoySettings();
        const envoy = await startEnvoy({
          extProc: { ...shipped.extProc, address: gateway.extProcAddress },
          routes: (["openai", "gemini"] as const).map((p) => ({ header: "x-gearbox-upstream", value: p, cluster: p })),
          clusters: { openai: { url: openaiUp.url }, gemini: { url: geminiUp.url } },
          bufferLimitBytes: shipped.bufferLimitBytes ?? 8 * 1024 * 1024,
        });
        base = envoy.url;
        closeEnvoy = () => envoy.close();
      }
      client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "k", maxRetries: 0 });
    });
    after(async () => {
      await closeEnvoy();
      await gateway.close();
      await Promise.all([openaiUp.close(), geminiUp.close()]);
    });

    test("responses.create: the recorded answer as output_text, usage, and a Chat Completions request upstream", async () => {
      openaiUp.queue({ fixture: "vercel-ai/openai/openai-text" });
      const res = await client.responses.create({ model: "gpt-replay", instructions: "Be brief.", input: "Hello", max_output_tokens: 200 });
      assert.equal(res.object, "response");
      assert.match(res.id, /^resp_/);
      assert.equal(res.status, "completed");
      assert.equal(res.output_text, recordedText());
      assert.ok((res.usage?.total_tokens ?? 0) > 0);
      const sent = JSON.parse(openaiUp.requests.at(-1)?.body.toString("utf8") ?? "{}") as Json;
      assert.equal(openaiUp.requests.at(-1)?.path, "/v1/chat/completions");
      assert.equal(sent.stream_options, undefined, "OpenAI refuses stream_options without stream");
      assert.deepEqual(sent.messages, [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hello" },
      ]);
    });

    test("responses.create stream: the Responses events in order, the deltas make the recorded text, completed carries it", async () => {
      openaiUp.queue({ fixture: "vercel-ai/openai/openai-text", pacing: { splitEvents: true } });
      const stream = await client.responses.create({
        model: "gpt-replay",
        input: [{ role: "user", content: [{ type: "input_text", text: "Hello" }] }],
        stream: true,
      });
      const types: string[] = [];
      let text = "";
      let completed: OpenAI.Responses.Response | undefined;
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === "response.output_text.delta") text += event.delta;
        if (event.type === "response.completed") completed = event.response;
      }
      assert.equal(text, recordedStreamText());
      assert.deepEqual((JSON.parse(openaiUp.requests.at(-1)?.body.toString("utf8") ?? "{}") as Json).stream_options, { include_usage: true });
      assert.deepEqual(types.slice(0, 4), ["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"]);
      assert.deepEqual(types.slice(-4), ["response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"]);
      const message = completed?.output[0];
      assert.ok(message?.type === "message" && message.content[0]?.type === "output_text");
      assert.equal(message.content[0].text, text);
    });

    test("responses.stream helper: finalResponse() has the recorded text", async () => {
      openaiUp.queue({ fixture: "vercel-ai/openai/openai-text" });
      const stream = client.responses.stream({ model: "gpt-replay", input: "Hello" });
      const final = await stream.finalResponse();
      assert.equal(final.output_text, recordedStreamText());
    });

    test("function tools on Gemini 3: a function_call item, then previous_response_id + function_call_output sends the recorded thought signature back", async () => {
      const fixture = "vercel-ai/google/google-tool-call-gemini3";
      const recorded = recordedCall(fixture);
      geminiUp.queue({ fixture });
      const first = await client.responses.create({ model: "gemini-3-pro-preview", input: "Weather in SF?", tools: [TOOL] });
      const call = first.output.find((o) => o.type === "function_call");
      assert.ok(call?.type === "function_call");
      assert.equal(call.name, "weather");
      assert.deepEqual(JSON.parse(call.arguments), recorded.args);

      geminiUp.queue({ fixture: "vercel-ai/google/google-text" });
      const second = await client.responses.create({
        model: "gemini-3-pro-preview",
        previous_response_id: first.id,
        input: [{ type: "function_call_output", call_id: call.call_id, output: '{"temp":18}' }],
        tools: [TOOL],
      });
      assert.equal(second.previous_response_id, first.id);
      assert.ok(second.output_text.length > 0);
      const sent = JSON.parse(geminiUp.requests.at(-1)?.body.toString("utf8") ?? "{}") as { contents: { role: string; parts: Json[] }[] };
      assert.deepEqual(
        sent.contents.map((c) => c.role),
        ["user", "model", "user"],
      );
      assert.equal(sent.contents[1]?.parts[0]?.thoughtSignature, recorded.signature);
      assert.deepEqual(sent.contents[2]?.parts[0], { functionResponse: { name: "weather", response: { temp: 18 } } });
    });

    test("streamed function call: output_item.added, arguments delta and done, the call in response.completed", async () => {
      geminiUp.queue({ fixture: "vercel-ai/google/google-tool-call-gemini3" });
      const stream = await client.responses.create({ model: "gemini-3-pro-preview", input: "Weather in SF?", tools: [TOOL], stream: true });
      const types: string[] = [];
      let args = "";
      let completed: OpenAI.Responses.Response | undefined;
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === "response.function_call_arguments.delta") args += event.delta;
        if (event.type === "response.completed") completed = event.response;
      }
      assert.ok(types.includes("response.function_call_arguments.done"));
      assert.deepEqual(JSON.parse(args), recordedCall("vercel-ai/google/google-tool-call-gemini3").args);
      const call = completed?.output.find((o) => o.type === "function_call");
      assert.ok(call?.type === "function_call");
      assert.equal(call.arguments, args);
    });

    const bad: [string, Json, string][] = [
      ["no input", { model: "gpt-replay" }, "input"],
      ["a built-in tool", { model: "gpt-replay", input: "x", tools: [{ type: "web_search" }] }, "tools[0].type"],
      ["an item_reference", { model: "gpt-replay", input: [{ type: "item_reference", id: "msg_1" }] }, "input[0].type"],
      ["a bad role", { model: "gpt-replay", input: [{ role: "robot", content: "x" }] }, "input[0].role"],
      ["a function_call without call_id", { model: "gpt-replay", input: [{ type: "function_call", name: "f", arguments: "{}" }] }, "input[0].call_id"],
      ["an unknown previous_response_id", { model: "gpt-replay", input: "x", previous_response_id: "resp_nope" }, "previous_response_id"],
      ["a file id", { model: "gpt-replay", input: [{ role: "user", content: [{ type: "input_file", file_id: "file-1" }] }] }, "input[0].content[0].file_id"],
      ["max_output_tokens 0", { model: "gpt-replay", input: "x", max_output_tokens: 0 }, "max_output_tokens"],
      ["background", { model: "gpt-replay", input: "x", background: true }, "background"],
    ];
    for (const [what, body, param] of bad) {
      test(`bad input, ${what}: a 400 naming '${param}'`, async () => {
        const before = openaiUp.requests.length;
        await assert.rejects(client.responses.create(body as never), (err: unknown) => {
          assert.ok(err instanceof OpenAI.APIError, String(err));
          assert.equal(err.status, 400);
          assert.equal(err.param, param);
          return true;
        });
        assert.equal(openaiUp.requests.length, before, "nothing reached the provider");
      });
    }
  });
}

describe("Responses API: the response store on Redis, and with Redis down", () => {
  test("previous_response_id through Redis (REDIS_URL's server); with Redis unreachable a new call still succeeds and a continuation is a 503 naming the field", async () => {
    const { connectRedis } = await import("../../extproc/store/redis.ts");
    const { RedisResponseStore } = await import("../../extproc/store/redis-response-store.ts");
    const { useResponseStore } = await import("../../extproc/endpoints/openai-responses.ts");
    const { testRedis } = await import("../../extproc/store/test-redis.ts");
    const redis = await testRedis();
    const upstream = await startOpenAIUpstream();
    const gateway = await startTestGateway(
      testConfig(`providers:\n  - { name: openai, kind: openai, base_url: '${upstream.baseURL}', models: [gpt-replay], default: true }\n`),
    );
    const client = new OpenAI({ baseURL: `http://127.0.0.1:${gateway.frontDoor.port}/v1`, apiKey: "k", maxRetries: 0 });
    const down = connectRedis("redis://127.0.0.1:1", { commandTimeoutMs: 50 });
    try {
      useResponseStore(new RedisResponseStore(redis.redis, { ttlMs: 60_000 }, redis.prefix));
      upstream.queue({ fixture: "vercel-ai/openai/openai-text" }, { fixture: "vercel-ai/openai/openai-text" });
      const first = await client.responses.create({ model: "gpt-replay", input: "Hello" });
      assert.match(await redis.dump(), new RegExp(`response:${first.id}`), "stored in Redis");
      await client.responses.create({ model: "gpt-replay", previous_response_id: first.id, input: "And then?" });
      const sent = JSON.parse(upstream.requests.at(-1)?.body.toString("utf8") ?? "{}") as { messages: { role: string; content: unknown }[] };
      assert.deepEqual(
        sent.messages.map((m) => [m.role, m.content]),
        [
          ["user", "Hello"],
          ["assistant", first.output_text],
          ["user", "And then?"],
        ],
      );

      useResponseStore(new RedisResponseStore(down, { ttlMs: 60_000 }));
      upstream.queue({ fixture: "vercel-ai/openai/openai-text" });
      const fresh = await client.responses.create({ model: "gpt-replay", input: "Hello" });
      assert.equal(fresh.status, "completed", "a failing store costs the continuation, not the call");
      await assert.rejects(client.responses.create({ model: "gpt-replay", previous_response_id: first.id, input: "x" }), (err: unknown) => {
        assert.ok(err instanceof OpenAI.APIError);
        assert.equal(err.status, 503);
        assert.equal(err.param, "previous_response_id");
        return true;
      });
    } finally {
      useResponseStore(undefined);
      down.disconnect();
      await gateway.close();
      await upstream.close();
      await redis.close();
    }
  });
});
