/** Canonical chat requests → Gemini `generateContent` requests: path, headers, and each mapping rule. */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ChatRequest, Message } from "../../../common/canonical/types.ts";
import { GatewayError } from "../../../common/errors.ts";
import { parseOpenAIChatRequest } from "../../../common/schemas/openai-chat-request.ts";
import { loadJsonFixture, readFixtureBytes } from "../../../test/emulators/fixtures.ts";
import { decodeCallId } from "./gemini-call-id.ts";
import { geminiBackend } from "./gemini.ts";
import { SKIP_THOUGHT_SIGNATURE, type GeminiRequestBody } from "./gemini-request.ts";

const CTX = { upstreamModel: "gemini-2.5-flash", forceStreamUsage: false };

/** An OpenAI request body, parsed as the front door parses it. */
function openai(body: Record<string, unknown>): ChatRequest {
  const parsed = parseOpenAIChatRequest({ model: "gpt-x", messages: [{ role: "user", content: "Hi" }], ...body });
  assert.ok(parsed.ok, JSON.stringify(parsed.ok ? null : parsed.errors));
  return parsed.value;
}

function body(req: ChatRequest, upstreamModel = CTX.upstreamModel): GeminiRequestBody {
  const upstream = geminiBackend.request(req, { ...CTX, upstreamModel });
  return JSON.parse(upstream.body?.toString("utf8") ?? "null") as GeminiRequestBody;
}

function rejects400(req: ChatRequest, param: string, message: RegExp): void {
  assert.throws(
    () => geminiBackend.request(req, CTX),
    (err: unknown) => {
      assert.ok(err instanceof GatewayError);
      assert.deepEqual([err.status, err.type, err.param], [400, "invalid_request_error", param]);
      assert.match(err.message, message);
      return true;
    },
  );
}

test("path: generateContent, or streamGenerateContent?alt=sse; model URL-encoded, models/ prefix accepted; content-type only", () => {
  const unary = geminiBackend.request(openai({}), CTX);
  assert.equal(unary.path, "/models/gemini-2.5-flash:generateContent");
  assert.deepEqual(unary.headers, { "content-type": "application/json" });
  assert.equal(geminiBackend.request(openai({ stream: true }), CTX).path, "/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
  assert.equal(geminiBackend.request(openai({}), { ...CTX, upstreamModel: "models/gemini-2.0-flash" }).path, "/models/gemini-2.0-flash:generateContent");
  assert.equal(geminiBackend.request(openai({}), { ...CTX, upstreamModel: "tuned/x y" }).path, "/models/tuned%2Fx%20y:generateContent");
});

test("system and developer messages → systemInstruction; user → user, assistant → model; same-role turns merged", () => {
  const out = body(
    openai({
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi" },
        {
          role: "user",
          content: [
            { type: "text", text: "there" },
            { type: "text", text: "" },
          ],
        },
        { role: "developer", content: [{ type: "text", text: "Use French." }] },
        { role: "assistant", content: "Salut" },
        { role: "assistant", content: "" },
        { role: "user", content: "Bye" },
      ],
    }),
  );
  assert.deepEqual(out.systemInstruction, { parts: [{ text: "Be brief." }, { text: "Use French." }] });
  assert.deepEqual(out.contents, [
    { role: "user", parts: [{ text: "Hi" }, { text: "there" }] },
    { role: "model", parts: [{ text: "Salut" }] },
    { role: "user", parts: [{ text: "Bye" }] },
  ]);
  rejects400(openai({ messages: [{ role: "system", content: "Only a system prompt" }] }), "messages", /at least one user/);
});

test("images: base64 → inlineData; URL → fileData with the MIME type of its extension (image/jpeg when unknown); audio → inlineData", () => {
  const out = body(
    openai({
      messages: [
        {
          role: "user",
          content: [
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
            { type: "image_url", image_url: { url: "https://example.com/cat.WEBP?size=2", detail: "high" } },
            { type: "image_url", image_url: { url: "https://generativelanguage.googleapis.com/v1beta/files/abc" } },
            { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } },
            { type: "input_audio", input_audio: { data: "SUQz", format: "mp3" } },
            { type: "file", file: { file_data: "data:application/pdf;base64,JVBERi0=", filename: "a.pdf" } },
            { type: "file", file: { file_data: "JVBERi0=", filename: "b.pdf" } },
          ],
        },
      ],
    }),
  );
  assert.deepEqual(out.contents[0]?.parts, [
    { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } },
    { fileData: { fileUri: "https://example.com/cat.WEBP?size=2", mimeType: "image/webp" } },
    { fileData: { fileUri: "https://generativelanguage.googleapis.com/v1beta/files/abc", mimeType: "image/jpeg" } },
    { inlineData: { mimeType: "audio/wav", data: "UklGRg==" } },
    { inlineData: { mimeType: "audio/mp3", data: "SUQz" } },
    { inlineData: { mimeType: "application/pdf", data: "JVBERi0=" } },
    { inlineData: { mimeType: "application/pdf", data: "JVBERi0=" } },
  ]);
  rejects400(openai({ messages: [{ role: "user", content: [{ type: "file", file: { file_id: "file-123" } }] }] }), "messages[0].content[0].file", /file_id/);
  rejects400(openai({ messages: [{ role: "user", content: [{ type: "file", file: { file_data: "AAAA" } }] }] }), "messages[0].content[0].file", /MIME type/);
});

const TOOL_TURN = [
  { role: "user", content: "Weather in Paris and Rome?" },
  {
    role: "assistant",
    content: null,
    tool_calls: [
      { id: "call_0", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } },
      { id: "call_1", type: "function", function: { name: "weather", arguments: '{"city":"Rome"}' } },
      { id: "call_2", type: "function", function: { name: "now", arguments: "" } },
    ],
  },
  { role: "tool", tool_call_id: "call_0", content: '{"temp":21}' },
  { role: "tool", tool_call_id: "call_1", content: "[18, 19]" },
  { role: "tool", tool_call_id: "call_2", content: "noon" },
  { role: "user", content: "Thanks" },
];

test("tool calls → functionCall parts (arguments parsed); results → functionResponse in one user turn, named by the earlier call", () => {
  const out = body(openai({ messages: TOOL_TURN }));
  assert.deepEqual(out.contents, [
    { role: "user", parts: [{ text: "Weather in Paris and Rome?" }] },
    {
      role: "model",
      parts: [
        { functionCall: { name: "weather", args: { city: "Paris" } } },
        { functionCall: { name: "weather", args: { city: "Rome" } } },
        { functionCall: { name: "now", args: {} } },
      ],
    },
    {
      role: "user",
      parts: [
        { functionResponse: { name: "weather", response: { temp: 21 } } },
        { functionResponse: { name: "weather", response: { result: [18, 19] } } },
        { functionResponse: { name: "now", response: { result: "noon" } } },
        { text: "Thanks" },
      ],
    },
  ]);
});

test("a tool result is named by the latest earlier call with its id (ids repeat across turns)", () => {
  const messages: Message[] = [
    { role: "user", content: "a" },
    { role: "assistant", content: null, toolCalls: [{ id: "call_0", name: "first", arguments: "{}" }] },
    { role: "tool", toolCallId: "call_0", content: "1" },
    { role: "assistant", content: null, toolCalls: [{ id: "call_0", name: "second", arguments: "{}" }] },
    { role: "tool", toolCallId: "call_0", content: "2" },
  ];
  const names = body({ model: "m", messages, stream: false, extra: {} })
    .contents.flatMap((c) => c.parts.map((p) => p.functionResponse?.name))
    .filter(Boolean);
  assert.deepEqual(names, ["first", "second"]);
});

test("unparsable or non-object tool arguments, and results for unknown calls, are 400s naming the message", () => {
  const withArgs = (args: string) =>
    openai({
      messages: [
        { role: "user", content: "x" },
        { role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: args } }] },
      ],
    });
  rejects400(withArgs('{"city": Par'), "messages[1].tool_calls[0].function.arguments", /not valid JSON/);
  rejects400(withArgs("[1,2]"), "messages[1].tool_calls[0].function.arguments", /must be a JSON object/);
  rejects400(
    openai({
      messages: [
        { role: "user", content: "x" },
        { role: "tool", tool_call_id: "nope", content: "1" },
      ],
    }),
    "messages[1].tool_call_id",
    /'nope'.*function's name/,
  );
});

test("thought signatures: Gemini 3 gets the documented placeholder on each assistant message's first call; 2.x gets none", () => {
  const signatures = (model: string) =>
    body(openai({ messages: TOOL_TURN }), model)
      .contents.filter((c) => c.role === "model")
      .flatMap((c) => c.parts.map((p) => p.thoughtSignature ?? null));
  assert.deepEqual(signatures("gemini-3-pro-preview"), [SKIP_THOUGHT_SIGNATURE, null, null]);
  assert.deepEqual(signatures("gemini-flash-latest"), [SKIP_THOUGHT_SIGNATURE, null, null]);
  assert.deepEqual(signatures("gemini-2.5-flash"), [null, null, null]);
  assert.deepEqual(signatures("models/gemini-1.5-pro"), [null, null, null]);
});

test("tools → functionDeclarations with cleaned schemas; parameterless functions omit parameters; $ref or constraint schemas go as parametersJsonSchema", () => {
  const schema = {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: { city: { type: "string", description: "City", format: "uri" }, unit: { type: ["string", "null"], enum: ["c", "f"] } },
    required: ["city", "ghost"],
  };
  const withRef = { type: "object", properties: { a: { $ref: "#/$defs/A" } }, $defs: { A: { type: "string" } }, $schema: "x" };
  const out = body(
    openai({
      tools: [
        { type: "function", function: { name: "weather", description: "Get weather", parameters: schema, strict: true } },
        { type: "function", function: { name: "now", parameters: { type: "object", properties: {} } } },
        { type: "function", function: { name: "refs", parameters: withRef } },
        { type: "function", function: { name: "closed", parameters: { type: "object", properties: { a: { type: "string" } }, additionalProperties: false } } },
      ],
    }),
  );
  assert.deepEqual(out.tools, [
    {
      functionDeclarations: [
        {
          name: "weather",
          description: "Get weather",
          parameters: {
            type: "object",
            properties: { city: { type: "string", description: "City" }, unit: { type: "string", nullable: true, enum: ["c", "f"] } },
            required: ["city"],
          },
        },
        { name: "now" },
        { name: "refs", parametersJsonSchema: { type: "object", properties: { a: { $ref: "#/$defs/A" } }, $defs: { A: { type: "string" } } } },
        { name: "closed", parametersJsonSchema: { type: "object", properties: { a: { type: "string" } }, additionalProperties: false } },
      ],
    },
  ]);
});

test("tool_choice auto/none/required/named → functionCallingConfig AUTO/NONE/ANY/ANY+allowedFunctionNames", () => {
  const config = (tool_choice: unknown) => body(openai({ tool_choice })).toolConfig;
  assert.deepEqual(config("auto"), { functionCallingConfig: { mode: "AUTO" } });
  assert.deepEqual(config("none"), { functionCallingConfig: { mode: "NONE" } });
  assert.deepEqual(config("required"), { functionCallingConfig: { mode: "ANY" } });
  assert.deepEqual(config({ type: "function", function: { name: "weather" } }), { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["weather"] } });
  assert.equal(body(openai({})).toolConfig, undefined);
});

test("generationConfig: sampling, length, stops, candidates, seed, penalties, logprobs", () => {
  const out = body(
    openai({
      temperature: 1.7,
      top_p: 0.9,
      max_completion_tokens: 256,
      stop: ["END", "STOP"],
      n: 2,
      seed: 42,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      logprobs: true,
      top_logprobs: 3,
      user: "u1",
      logit_bias: { "1": 5 },
    }),
  );
  assert.deepEqual(out.generationConfig, {
    temperature: 1.7,
    topP: 0.9,
    maxOutputTokens: 256,
    stopSequences: ["END", "STOP"],
    candidateCount: 2,
    seed: 42,
    presencePenalty: 0.5,
    frequencyPenalty: -0.5,
    responseLogprobs: true,
    logprobs: 3,
  });
  assert.equal(body(openai({ max_tokens: 10 })).generationConfig?.maxOutputTokens, 10);
  assert.equal(body(openai({})).generationConfig, undefined);
  assert.deepEqual(body(openai({ logprobs: false, top_logprobs: 2 })).generationConfig, undefined);
});

test("response_format: json_object → application/json; json_schema → + cleaned responseSchema, or responseJsonSchema when cleaning would lose $ref or a constraint", () => {
  const format = (response_format: unknown) => body(openai({ response_format })).generationConfig;
  assert.deepEqual(format({ type: "json_object" }), { responseMimeType: "application/json" });
  assert.equal(format({ type: "text" }), undefined);
  const schema = {
    type: "object",
    properties: { n: { type: "integer" }, tags: { type: "array", items: { type: "string", minLength: 1 } } },
    required: ["n"],
  };
  assert.deepEqual(format({ type: "json_schema", json_schema: { name: "out", strict: true, schema } }), {
    responseMimeType: "application/json",
    responseSchema: schema,
  });
  const strict = { ...schema, additionalProperties: false };
  assert.deepEqual(format({ type: "json_schema", json_schema: { name: "out", strict: true, schema: strict } }), {
    responseMimeType: "application/json",
    responseJsonSchema: strict,
  });
  const withRef = { $schema: "s", type: "object", properties: { a: { $ref: "#/$defs/A" } }, $defs: { A: { type: "string" } } };
  assert.deepEqual(format({ type: "json_schema", json_schema: { name: "out", schema: withRef } }), {
    responseMimeType: "application/json",
    responseJsonSchema: { type: "object", properties: { a: { $ref: "#/$defs/A" } }, $defs: { A: { type: "string" } } },
  });
  assert.deepEqual(format({ type: "json_schema", json_schema: { name: "out" } }), { responseMimeType: "application/json" });
});

test("reasoning_effort → thinkingBudget (Gemini 2.x) or thinkingLevel (Gemini 3); unknown effort is a 400", () => {
  assert.deepEqual(body(openai({ reasoning_effort: "low" }), "gemini-2.5-flash").generationConfig, {
    thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
  });
  assert.deepEqual(body(openai({ reasoning_effort: "none" }), "gemini-2.5-flash").generationConfig, { thinkingConfig: { thinkingBudget: 0 } });
  assert.deepEqual(body(openai({ reasoning_effort: "high" }), "gemini-3-pro-preview").generationConfig, {
    thinkingConfig: { thinkingLevel: "high", includeThoughts: true },
  });
  assert.deepEqual(body(openai({ reasoning_effort: "none" }), "gemini-3-flash-preview").generationConfig, { thinkingConfig: { thinkingLevel: "minimal" } });
  rejects400(openai({ reasoning_effort: "extreme" }), "reasoning_effort", /'extreme'/);
});

test("an assistant refusal with no content is kept as the model's text", () => {
  const messages: Message[] = [
    { role: "user", content: "x" },
    { role: "assistant", content: null, refusal: "I can't." },
    { role: "user", content: "ok" },
  ];
  const out = body({ model: "m", messages, stream: false, extra: {} });
  assert.deepEqual(out.contents[1], { role: "model", parts: [{ text: "I can't." }] });
});

test("empty turns are kept as {text: ''}: [system, user ''] is sent, a leading empty user turn stays, an empty assistant turn keeps its neighbours apart", () => {
  assert.deepEqual(
    body(
      openai({
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "" },
        ],
      }),
    ).contents,
    [{ role: "user", parts: [{ text: "" }] }],
  );
  const leading = body(
    openai({
      messages: [
        { role: "user", content: "" },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c1", content: "ok" },
      ],
    }),
  ).contents;
  assert.equal(leading[0]?.role, "user");
  assert.deepEqual(leading[0]?.parts, [{ text: "" }]);
  assert.deepEqual(
    leading.map((c) => c.role),
    ["user", "model", "user"],
  );
  const middle = body(
    openai({
      messages: [
        { role: "user", content: "One" },
        { role: "assistant", content: "" },
        { role: "user", content: "Two" },
      ],
    }),
  ).contents;
  assert.deepEqual(middle, [
    { role: "user", parts: [{ text: "One" }] },
    { role: "model", parts: [{ text: "" }] },
    { role: "user", parts: [{ text: "Two" }] },
  ]);
});

/** The recorded answer's first candidate, decoded as the backend decodes it, then sent back as history. */
function historyAfter(fixture: string): { req: ChatRequest; recorded: { functionCall?: { id?: string }; thoughtSignature?: string }[] } {
  const res = geminiBackend.response(readFixtureBytes(fixture, "json"), {}, CTX);
  assert.ok(res.ok);
  const message = res.value.choices[0]?.message;
  assert.ok(message?.toolCalls?.length);
  const results: Message[] = message.toolCalls.map((c) => ({ role: "tool", toolCallId: c.id, content: '{"ok":true}' }));
  const json = loadJsonFixture(fixture) as { candidates: { content: { parts: { functionCall?: { id?: string }; thoughtSignature?: string }[] } }[] };
  const recorded = json.candidates[0]?.content.parts.filter((p) => p.functionCall !== undefined) ?? [];
  return { req: { model: "m", messages: [{ role: "user", content: "go" }, message, ...results], stream: false, extra: {} }, recorded };
}

test("recorded thought signatures go back on their calls exactly as received (no placeholder)", () => {
  for (const fixture of [
    "vercel-ai/google/google-tool-call-gemini3",
    "firebase-gemini/googleai/unary-success-thinking-function-call-thought-summary-signature",
  ]) {
    const { req, recorded } = historyAfter(fixture);
    const sent = body(req, "gemini-3-pro-preview").contents[1]?.parts.filter((p) => p.functionCall !== undefined) ?? [];
    assert.deepEqual(
      sent.map((p) => p.thoughtSignature),
      recorded.map((p) => p.thoughtSignature),
      fixture,
    );
    assert.ok(sent.every((p) => p.thoughtSignature !== SKIP_THOUGHT_SIGNATURE));
  }
});

test("Gemini's functionCall ids go back on the call and its functionResponse; ids Gemini did not issue are not sent", () => {
  const answer = Buffer.from(
    JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ functionCall: { id: "fc-7", name: "now", args: {} } }] }, finishReason: "STOP" }] }),
  );
  const res = geminiBackend.response(answer, {}, CTX);
  assert.ok(res.ok);
  const message = res.value.choices[0]?.message;
  const call = message?.toolCalls?.[0];
  assert.ok(message && call);
  const req: ChatRequest = {
    model: "m",
    messages: [{ role: "user", content: "time?" }, message, { role: "tool", toolCallId: call.id, content: "noon" }],
    stream: false,
    extra: {},
  };
  const out = body(req);
  assert.deepEqual(out.contents[1]?.parts[0]?.functionCall, { name: "now", args: {}, id: "fc-7" });
  assert.deepEqual(out.contents[2]?.parts[0]?.functionResponse, { name: "now", response: { result: "noon" }, id: "fc-7" });

  const foreign: ChatRequest = {
    model: "m",
    messages: [
      { role: "user", content: "time?" },
      { role: "assistant", content: null, toolCalls: [{ id: "call_abc", name: "now", arguments: "{}" }] },
      { role: "tool", toolCallId: "call_abc", content: "noon" },
    ],
    stream: false,
    extra: {},
  };
  const plain = body(foreign, "gemini-3-pro-preview");
  assert.deepEqual(plain.contents[1]?.parts[0], { functionCall: { name: "now", args: {} }, thoughtSignature: SKIP_THOUGHT_SIGNATURE });
  assert.deepEqual(plain.contents[2]?.parts[0], { functionResponse: { name: "now", response: { result: "noon" } } });
});

test("a tool-call id that merely looks packed carries nothing", () => {
  assert.deepEqual(decodeCallId("call_1__gx!!!"), {});
  assert.deepEqual(decodeCallId("call_1__gxWzFd"), {});
  assert.deepEqual(decodeCallId("call_1"), {});
});
