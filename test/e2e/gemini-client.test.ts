/**
 * Gemini's generateContent / streamGenerateContent as a client API, with Google's own SDK
 * (`@google/genai`) as the client, through the front door and through the Envoy harness:
 * answers replayed from recorded provider traffic on an OpenAI backend and a Gemini backend,
 * function calling (the recorded thought signature back on the next turn), and bad inputs
 * answered 400 in Google's error shape, naming the field.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ApiError, GoogleGenAI, Type } from "@google/genai";
import { startEnvoy } from "../harness/envoy.ts";
import { loadChunkFixture, loadJsonFixture } from "../emulators/fixtures.ts";
import { startGeminiUpstream, type GeminiUpstream } from "../emulators/gemini-upstream.ts";
import { startOpenAIUpstream, type OpenAIUpstream } from "../emulators/openai-upstream.ts";
import { shippedEnvoySettings } from "../support/envoy-settings.ts";
import { startTestGateway, testConfig, type TestGateway } from "../support/gateway.ts";

type Json = Record<string, unknown>;

function recordedOpenAIText(): string {
  const json = loadJsonFixture("vercel-ai/openai/openai-text") as { choices: { message: { content: string } }[] };
  return json.choices[0]?.message.content ?? "";
}
function recordedOpenAIStreamText(): string {
  return (loadChunkFixture("vercel-ai/openai/openai-text") as { choices?: { delta?: { content?: string } }[] }[])
    .map((c) => c.choices?.[0]?.delta?.content ?? "")
    .join("");
}
function recordedGeminiText(name: string): string {
  const json = loadJsonFixture(name) as { candidates: { content: { parts: { text?: string; thought?: boolean }[] } }[] };
  return (json.candidates[0]?.content.parts ?? [])
    .filter((p) => p.thought !== true && typeof p.text === "string")
    .map((p) => p.text)
    .join("");
}

const WEATHER = {
  name: "weather",
  description: "Weather by city",
  parameters: { type: Type.OBJECT, properties: { location: { type: Type.STRING } }, required: ["location"] },
};

for (const entry of ["front door", "Envoy + ext_proc"] as const) {
  describe(`Gemini client API via ${entry}`, () => {
    let openaiUp: OpenAIUpstream;
    let geminiUp: GeminiUpstream;
    let gateway: TestGateway;
    let ai: GoogleGenAI;
    let base = "";
    let closeEnvoy = () => Promise.resolve();

    before(async () => {
      openaiUp = await startOpenAIUpstream();
      geminiUp = await startGeminiUpstream();
      gateway = await startTestGateway(
        testConfig(`providers:
  - { name: openai, kind: openai, base_url: '${openaiUp.baseURL}', models: [gpt-replay], default: true }
  - { name: gemini, kind: gemini, base_url: '${geminiUp.baseURL}', models: [gemini-3-pro-preview, gemini-2.5-flash] }
`),
      );
      base = `http://127.0.0.1:${gateway.frontDoor.port}`;
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
      ai = new GoogleGenAI({ apiKey: "app-key", httpOptions: { baseUrl: base } });
    });
    after(async () => {
      await closeEnvoy();
      await gateway.close();
      await Promise.all([openaiUp.close(), geminiUp.close()]);
    });

    test("generateContent on an OpenAI backend: the recorded text, usage, and the system instruction upstream", async () => {
      openaiUp.queue({ fixture: "vercel-ai/openai/openai-text" });
      const res = await ai.models.generateContent({ model: "gpt-replay", contents: "Hello", config: { systemInstruction: "Be brief.", maxOutputTokens: 100 } });
      assert.equal(res.text, recordedOpenAIText());
      assert.ok((res.usageMetadata?.totalTokenCount ?? 0) > 0);
      const sent = JSON.parse(openaiUp.requests.at(-1)?.body.toString("utf8") ?? "{}") as Json;
      assert.deepEqual(sent.messages, [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hello" },
      ]);
      assert.equal(sent.max_tokens ?? sent.max_completion_tokens, 100);
    });

    test("generateContentStream on an OpenAI backend: the chunks make the recorded text, the last has finishReason STOP", async () => {
      openaiUp.queue({ fixture: "vercel-ai/openai/openai-text", pacing: { splitEvents: true } });
      const stream = await ai.models.generateContentStream({ model: "gpt-replay", contents: "Hello" });
      let text = "";
      let finish: string | undefined;
      for await (const chunk of stream) {
        text += chunk.text ?? "";
        finish = chunk.candidates?.[0]?.finishReason ?? finish;
      }
      assert.equal(text, recordedOpenAIStreamText());
      assert.equal(finish, "STOP");
    });

    test("generateContent on a Gemini backend: the recorded answer", async () => {
      const fixture = "vercel-ai/google/google-text";
      geminiUp.queue({ fixture });
      const res = await ai.models.generateContent({ model: "gemini-2.5-flash", contents: "Hello" });
      assert.equal(res.text, recordedGeminiText(fixture));
    });

    test("a client key in the query (?key=, Google's REST convention) never reaches the Gemini provider; the rest of the query does", async () => {
      geminiUp.queue({ fixture: "vercel-ai/google/google-text" });
      const res = await fetch(`${base}/v1beta/models/gemini-2.5-flash:generateContent?key=client-secret-key&trace=on`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "Hello" }] }] }),
      });
      assert.equal(res.status, 200);
      const seen = geminiUp.requests.at(-1);
      assert.equal(seen?.url, "/v1beta/models/gemini-2.5-flash:generateContent?trace=on");
      assert.equal(JSON.stringify(seen?.headers).includes("client-secret-key"), false);
    });

    test("function calling on Gemini 3: the call with its thought signature, and the next turn sends it back", async () => {
      const fixture = "vercel-ai/google/google-tool-call-gemini3";
      const recorded = loadJsonFixture(fixture) as { candidates: { content: { parts: { functionCall?: { args: unknown }; thoughtSignature?: string }[] } }[] };
      const part = recorded.candidates[0]?.content.parts[0];
      geminiUp.queue({ fixture });
      const config = { tools: [{ functionDeclarations: [WEATHER] }] };
      const first = await ai.models.generateContent({ model: "gemini-3-pro-preview", contents: "Weather in SF?", config });
      const call = first.functionCalls?.[0];
      assert.equal(call?.name, "weather");
      assert.deepEqual(call?.args, part?.functionCall?.args);
      const modelTurn = first.candidates?.[0]?.content;
      assert.ok(modelTurn);
      assert.equal(modelTurn.parts?.[0]?.thoughtSignature, part?.thoughtSignature);

      geminiUp.queue({ fixture: "vercel-ai/google/google-text" });
      await ai.models.generateContent({
        model: "gemini-3-pro-preview",
        contents: [
          { role: "user", parts: [{ text: "Weather in SF?" }] },
          modelTurn,
          { role: "user", parts: [{ functionResponse: { name: "weather", response: { temp: 18 } } }] },
        ],
        config,
      });
      const sent = JSON.parse(geminiUp.requests.at(-1)?.body.toString("utf8") ?? "{}") as { contents: { role: string; parts: Json[] }[] };
      assert.equal(sent.contents[1]?.parts[0]?.thoughtSignature, part?.thoughtSignature);
      assert.deepEqual(sent.contents[2]?.parts[0], { functionResponse: { name: "weather", response: { temp: 18 } } });
    });

    const bad: [string, Json, string][] = [
      ["no contents", {}, "contents"],
      ["a Gemini-only tool", { contents: [{ role: "user", parts: [{ text: "x" }] }], tools: [{ googleSearch: {} }] }, "tools[0].googleSearch"],
      ["a bad role", { contents: [{ role: "robot", parts: [{ text: "x" }] }] }, "contents[0].role"],
      ["an unknown part", { contents: [{ role: "user", parts: [{ videoMetadata: {} }] }] }, "contents[0].parts[0]"],
      [
        "a response to no call",
        { contents: [{ role: "user", parts: [{ functionResponse: { name: "f", response: {} } }] }] },
        "contents[0].parts[0].functionResponse",
      ],
      ["a bad temperature", { contents: [{ role: "user", parts: [{ text: "x" }] }], generationConfig: { temperature: 9 } }, "generationConfig.temperature"],
    ];
    for (const [what, body, field] of bad) {
      test(`bad input, ${what}: 400 INVALID_ARGUMENT naming '${field}'`, async () => {
        const before = openaiUp.requests.length + geminiUp.requests.length;
        const res = await fetch(`${base}/v1beta/models/gpt-replay:generateContent`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-goog-api-key": "app-key" },
          body: JSON.stringify(body),
        });
        assert.equal(res.status, 400);
        const json = (await res.json()) as { error: { code: number; status: string; message: string; details: { fieldViolations: { field: string }[] }[] } };
        assert.equal(json.error.code, 400);
        assert.equal(json.error.status, "INVALID_ARGUMENT");
        assert.equal(json.error.details[0]?.fieldViolations[0]?.field, field);
        assert.ok(json.error.message.includes(field.split(".")[0] ?? field));
        assert.equal(openaiUp.requests.length + geminiUp.requests.length, before, "nothing reached a provider");
      });
    }

    test("bad input through the SDK: an ApiError with status 400", async () => {
      await assert.rejects(
        ai.models.generateContent({ model: "gpt-replay", contents: "x", config: { tools: [{ googleSearch: {} }] } }),
        (err: unknown) => err instanceof ApiError && err.status === 400 && err.message.includes("googleSearch"),
      );
    });
  });
}
