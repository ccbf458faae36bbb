/**
 * Every recorded Gemini `generateContent` body (firebase-gemini, vercel-ai/google) decoded into
 * the canonical response, key facts asserted: text equals the recorded non-thought text parts,
 * function calls, finish reason (filters → content_filter with a refusal), usage. Error bodies
 * are covered in `gemini-error.test.ts`.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ChatResponse, FinishReason, Usage } from "../../../common/canonical/types.ts";
import { GatewayError } from "../../../common/errors.ts";
import { loadJsonFixture, readFixtureBytes } from "../../../test/emulators/fixtures.ts";
import { decodeCallId } from "./gemini-call-id.ts";
import { geminiBackend } from "./gemini.ts";

const CTX = { upstreamModel: "gemini-2.5-flash", forceStreamUsage: false };
const G = "firebase-gemini/googleai/";
const V = "firebase-gemini/vertexai/";
const VA = "vercel-ai/google/";

interface Facts {
  finish: FinishReason;
  /** Exact text; default: the recorded non-thought text parts of candidate 0, joined. */
  text?: string | null;
  refusal?: RegExp;
  calls?: [name: string, args: unknown][];
  reasoning?: RegExp;
  usage?: Usage;
}

const SUCCESS: Record<string, Facts> = {
  [`${G}unary-success-basic-reply-short`]: {
    finish: "stop",
    text: "Google's headquarters, also known as the Googleplex, is located in **Mountain View, California**.\n",
    usage: { inputTokens: 7, outputTokens: 22, totalTokens: 29 },
  },
  [`${G}unary-success-basic-reply-long`]: { finish: "stop", usage: { inputTokens: 9, outputTokens: 1612, totalTokens: 1621 } },
  [`${G}unary-success-citations`]: { finish: "stop", usage: { inputTokens: 15, outputTokens: 1667, totalTokens: 1682 } },
  [`${G}unary-success-google-maps-grounding`]: { finish: "stop" },
  [`${G}unary-success-google-search-grounding`]: { finish: "stop" },
  [`${G}unary-success-google-search-grounding-empty-grounding-chunks`]: { finish: "stop" },
  [`${G}unary-success-url-context`]: { finish: "stop" },
  [`${G}unary-success-url-context-mixed-validity`]: { finish: "stop" },
  [`${G}unary-success-thinking-reply-thought-summary`]: {
    finish: "stop",
    text: "Mountain View",
    reasoning: /^\*\*Thinking About Google's Headquarters\*\*/,
    usage: { inputTokens: 14, outputTokens: 26, totalTokens: 40, reasoningTokens: 24 },
  },
  [`${G}unary-success-thinking-function-call-thought-summary-signature`]: {
    finish: "tool_calls",
    text: null,
    calls: [["now", {}]],
    reasoning: /^\*\*Thinking Through the New Year's Eve Calculation\*\*/,
  },
  [`${G}unary-failure-finish-reason-safety`]: {
    finish: "content_filter",
    text: "Safety error incoming in 5, 4, 3, 2...",
    refusal: /^Gemini stopped the response \(SAFETY\)/,
    usage: { inputTokens: 7, outputTokens: 20, totalTokens: 27 },
  },
  [`${G}unary-failure-only-prompt-feedback`]: { finish: "content_filter", text: null, refusal: /^Gemini blocked the prompt .*Message$/ },
  [`${V}unary-failure-finish-reason-safety-no-content`]: {
    finish: "content_filter",
    text: null,
    refusal: /\(SAFETY\).*Blocked categories: HARM_CATEGORY_HARASSMENT\./,
  },
  [`${V}unary-failure-prompt-blocked-safety`]: {
    finish: "content_filter",
    text: null,
    refusal: /^Gemini blocked the prompt \(SAFETY\): it was flagged as potentially unsafe\.$/,
  },
  [`${V}unary-failure-prompt-blocked-safety-with-message`]: { finish: "content_filter", text: null, refusal: /\(SAFETY\).* Reasons$/ },
  [`${V}unary-failure-unknown-enum-prompt-blocked`]: { finish: "content_filter", text: null, refusal: /\(FAKE_NEW_BLOCK_REASON\)/ },
  [`${V}unary-failure-unknown-enum-finish-reason`]: { finish: "stop", text: "Some text" },
  [`${V}unary-success-function-call-parallel-calls`]: {
    finish: "tool_calls",
    text: null,
    calls: [
      ["sum", { y: 1, x: 2 }],
      ["sum", { y: 3, x: 4 }],
      ["sum", { y: 5, x: 6 }],
    ],
  },
  [`${V}unary-success-function-call-different-parallel-calls`]: {
    finish: "tool_calls",
    text: null,
    calls: [
      ["sum", { y: 1, x: 2 }],
      ["multiply", { y: 3, x: 4 }],
      ["subtract", { y: 5, x: 6 }],
    ],
  },
  [`${V}unary-success-function-call-empty-arguments`]: { finish: "tool_calls", text: null, calls: [["current_time", {}]] },
  [`${V}unary-success-function-call-no-arguments`]: { finish: "tool_calls", text: null, calls: [["current_time", {}]] },
  [`${V}unary-success-function-call-null`]: {
    finish: "tool_calls",
    text: null,
    calls: [["functionName", { original_title: "String", season: null }]],
    usage: { inputTokens: 774, outputTokens: 4176, totalTokens: 4950 },
  },
  [`${V}unary-success-function-call-mixed-content`]: {
    finish: "tool_calls",
    text: "The sum of [1, 2,3] is",
    calls: [
      ["sum", { y: 1, x: 2 }],
      ["sum", { y: 3, x: 3 }],
    ],
  },
  [`${V}unary-success-implicit-caching`]: {
    finish: "stop",
    usage: { inputTokens: 12013, outputTokens: 88, totalTokens: 12101, cachedInputTokens: 11243, reasoningTokens: 73 },
  },
  [`${VA}google-text`]: { finish: "stop", usage: { inputTokens: 9, outputTokens: 272, totalTokens: 281, reasoningTokens: 244 } },
  [`${VA}google-reasoning`]: { finish: "stop", usage: { inputTokens: 9, outputTokens: 311, totalTokens: 320, reasoningTokens: 282 } },
  [`${VA}google-reasoning-gemini3`]: { finish: "stop", usage: { inputTokens: 9, outputTokens: 287, totalTokens: 296, reasoningTokens: 258 } },
  [`${VA}google-tool-call`]: {
    finish: "tool_calls",
    text: null,
    calls: [["weather", { location: "San Francisco" }]],
    usage: { inputTokens: 29, outputTokens: 908, totalTokens: 937, reasoningTokens: 893 },
  },
  [`${VA}google-tool-call-gemini3`]: { finish: "tool_calls", text: null, calls: [["weather", { location: "San Francisco" }]] },
};

/** Independent oracle: the recorded non-thought text parts of the first candidate. */
function recordedText(name: string): string {
  const json = loadJsonFixture(name) as { candidates?: { content?: { parts?: { text?: string; thought?: boolean }[] } }[] };
  return (json.candidates?.[0]?.content?.parts ?? [])
    .filter((p) => p.thought !== true && typeof p.text === "string")
    .map((p) => p.text)
    .join("");
}

/** Independent oracle: the recorded `thoughtSignature` of each function-call part of the first candidate. */
function recordedSignatures(name: string): (string | undefined)[] {
  const json = loadJsonFixture(name) as { candidates?: { content?: { parts?: { functionCall?: unknown; thoughtSignature?: string }[] } }[] };
  return (json.candidates?.[0]?.content?.parts ?? []).filter((p) => p.functionCall !== undefined).map((p) => p.thoughtSignature);
}

function decode(name: string): ChatResponse {
  const result = geminiBackend.response(readFixtureBytes(name, "json"), {}, CTX);
  assert.ok(result.ok, `${name}: ${result.ok ? "" : result.errors[0]?.message}`);
  return result.value;
}

for (const [name, facts] of Object.entries(SUCCESS)) {
  test(`recorded ${name}: decodes to a ${facts.finish} choice with the recorded content`, () => {
    const res = decode(name);
    const [choice] = res.choices;
    assert.equal(res.choices.length, 1);
    assert.equal(choice?.finishReason, facts.finish);
    const expected = facts.text === undefined ? recordedText(name) : facts.text;
    if (expected !== null) assert.ok(expected.length > 0, "the oracle found text");
    assert.equal(choice?.message.content, expected);
    if (facts.refusal) assert.match(choice?.message.refusal ?? "", facts.refusal);
    else assert.equal(choice?.message.refusal, undefined);
    const calls = choice?.message.toolCalls?.map((c) => [c.name, JSON.parse(c.arguments) as unknown]);
    assert.deepEqual(calls, facts.calls);
    assert.deepEqual(
      choice?.message.toolCalls?.map((c) => c.id.replace(/__gx.*$/, "")),
      facts.calls?.map((_, i) => `call_${i}`),
    );
    assert.deepEqual(
      choice?.message.toolCalls?.map((c) => decodeCallId(c.id).thoughtSignature),
      facts.calls === undefined ? undefined : recordedSignatures(name),
      "each call carries its part's thought signature",
    );
    if (facts.reasoning) assert.match(choice?.message.reasoning ?? "", facts.reasoning);
    if (facts.usage) assert.deepEqual(res.usage, facts.usage);
  });
}

test("response meta: responseId and modelVersion when recorded, else a generated id and the routed model", () => {
  const recorded = decode(`${VA}google-text`);
  assert.equal(recorded.id, "Un6LacrVMcjUxs0PmJfWoQc");
  assert.equal(recorded.model, "gemini-3-pro-preview");
  const bare = decode(`${V}unary-success-function-call-parallel-calls`);
  assert.match(bare.id, /^gemini-[0-9a-f-]{36}$/);
  assert.equal(bare.model, "gemini-2.5-flash");
  assert.ok(Math.abs(bare.created - Date.now() / 1000) < 5);
});

test("code execution parts read as fenced blocks before the answer; tool-use prompt tokens count as input", () => {
  const res = decode(`${G}unary-success-code-execution`);
  assert.equal(res.choices[0]?.finishReason, "stop");
  // promptTokenCount 21 + toolUsePromptTokenCount 160; candidatesTokenCount 96 + thoughtsTokenCount 86.
  assert.deepEqual(res.usage, { inputTokens: 181, outputTokens: 182, totalTokens: 363, reasoningTokens: 86 });
  const text = res.choices[0]?.message.content ?? "";
  const code = "prime_numbers = [2, 3, 5, 7, 11]\nsum_of_primes = sum(prime_numbers)\nprint(f'{sum_of_primes=}')\n";
  assert.equal(text, `\n\`\`\`python\n${code}\`\`\`\n\n\`\`\`\nsum_of_primes=28\n\`\`\`\n${recordedText(`${G}unary-success-code-execution`)}`);
});

const FAILURES: Record<string, { code: string; message: RegExp }> = {
  [`${G}unary-failure-with-message-no-content`]: {
    code: "OTHER",
    message: /^Gemini returned no content \(OTHER\): Model failed to generate content due to internal error\.$/,
  },
  [`${V}unary-failure-empty-content`]: { code: "NO_CONTENT", message: /no finishReason/ },
  [`${V}unary-failure-malformed-content`]: { code: "NO_CONTENT", message: /no finishReason/ },
  [`${V}unary-failure-invalid-response`]: { code: "upstream_malformed", message: /not a GenerateContentResponse/ },
};

for (const [name, want] of Object.entries(FAILURES)) {
  test(`recorded ${name}: a 200 body with nothing usable is a 502, not an empty success`, () => {
    const result = geminiBackend.response(readFixtureBytes(name, "json"), {}, CTX);
    assert.equal(result.ok, false);
    const err = result.ok ? undefined : result.errors[0];
    assert.ok(err instanceof GatewayError);
    assert.deepEqual([err.status, err.type, err.code], [502, "upstream_error", want.code]);
    assert.match(err.message, want.message);
  });
}

test("malformed bodies: not JSON, not an object, an error object with status 200", () => {
  const notJson = geminiBackend.response(Buffer.from("<html>"), {}, CTX);
  assert.ok(!notJson.ok && notJson.errors[0]?.status === 502 && notJson.errors[0].code === "upstream_malformed");
  const array = geminiBackend.response(Buffer.from("[]"), {}, CTX);
  assert.ok(!array.ok && array.errors[0]?.status === 502);
  const error = geminiBackend.response(Buffer.from(JSON.stringify({ error: { code: 503, message: "overloaded", status: "UNAVAILABLE" } })), {}, CTX);
  assert.ok(!error.ok && error.errors[0]?.status === 503 && error.errors[0].code === "UNAVAILABLE");
});

test("finish reasons: MAX_TOKENS → length; filters → content_filter with a refusal; abnormal ends keep their output", () => {
  const body = (candidate: object): Buffer => Buffer.from(JSON.stringify({ candidates: [candidate] }));
  const text = { content: { role: "model", parts: [{ text: "partial" }] } };
  const cases: [string, FinishReason, RegExp | undefined][] = [
    ["MAX_TOKENS", "length", undefined],
    ["RECITATION", "content_filter", /may recite protected material/],
    ["BLOCKLIST", "content_filter", /blocklisted terms/],
    ["PROHIBITED_CONTENT", "content_filter", /prohibited content/],
    ["SPII", "content_filter", /sensitive personal information/],
    ["LANGUAGE", "content_filter", /language is not supported/],
    ["IMAGE_SAFETY", "content_filter", /generated image/],
    ["MALFORMED_FUNCTION_CALL", "stop", undefined],
    ["OTHER", "stop", undefined],
  ];
  for (const [reason, finish, refusal] of cases) {
    const result = geminiBackend.response(body({ ...text, finishReason: reason, finishMessage: "detail" }), {}, CTX);
    assert.ok(result.ok, reason);
    const choice = result.value.choices[0];
    assert.equal(choice?.finishReason, finish, reason);
    assert.equal(choice?.message.content, "partial", reason);
    if (refusal) assert.match(choice?.message.refusal ?? "", new RegExp(`^Gemini stopped the response \\(${reason}\\): .*${refusal.source}.* detail$`), reason);
    else assert.equal(choice?.message.refusal, undefined, reason);
  }
  const malformed = geminiBackend.response(body({ finishReason: "MALFORMED_FUNCTION_CALL", finishMessage: "Malformed function call: foo(" }), {}, CTX);
  assert.ok(!malformed.ok && malformed.errors[0]?.code === "MALFORMED_FUNCTION_CALL" && /foo\($/.test(malformed.errors[0].message));
});

test("several candidates become several choices; a failed one among good ones is dropped", () => {
  const json = {
    candidates: [
      { index: 0, content: { parts: [{ text: "A" }] }, finishReason: "STOP" },
      { index: 1, content: { parts: [{ functionCall: { name: "f", args: { a: 1 } } }] }, finishReason: "STOP" },
      { index: 2, finishReason: "OTHER" },
    ],
  };
  const result = geminiBackend.response(Buffer.from(JSON.stringify(json)), {}, CTX);
  assert.ok(result.ok);
  assert.deepEqual(
    result.value.choices.map((c) => [c.index, c.finishReason, c.message.content]),
    [
      [0, "stop", "A"],
      [1, "tool_calls", null],
    ],
  );
  assert.equal(result.value.choices[1]?.message.toolCalls?.[0]?.id, "call_0");
});

test("logprobsResult → OpenAI-shaped logprobs", () => {
  const json = {
    candidates: [
      {
        content: { parts: [{ text: "Hi" }] },
        finishReason: "STOP",
        logprobsResult: {
          chosenCandidates: [{ token: "Hi", logProbability: -0.1 }],
          topCandidates: [
            {
              candidates: [
                { token: "Hi", logProbability: -0.1 },
                { token: "Hey", logProbability: -2.5 },
              ],
            },
          ],
        },
      },
    ],
  };
  const result = geminiBackend.response(Buffer.from(JSON.stringify(json)), {}, CTX);
  assert.ok(result.ok);
  assert.deepEqual(result.value.choices[0]?.logprobs, {
    content: [
      {
        token: "Hi",
        logprob: -0.1,
        bytes: [72, 105],
        top_logprobs: [
          { token: "Hi", logprob: -0.1, bytes: [72, 105] },
          { token: "Hey", logprob: -2.5, bytes: [72, 101, 121] },
        ],
      },
    ],
    refusal: null,
  });
});
