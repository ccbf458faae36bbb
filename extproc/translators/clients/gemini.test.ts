/** The Gemini client API: request parsing rules and the response codec, thought signatures end to end. */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ChatRequest } from "../../../common/canonical/types.ts";
import { GatewayError } from "../../../common/errors.ts";
import { geminiBackend } from "../backends/gemini.ts";
import { geminiClient } from "./gemini.ts";
import { parseGeminiGenerateRequest } from "./gemini-request.ts";

function parse(body: Record<string, unknown>, model = "gemini-3-pro-preview"): ChatRequest {
  const parsed = parseGeminiGenerateRequest(body, model, false);
  assert.ok(parsed.ok, JSON.stringify(parsed.ok ? null : parsed.errors));
  return parsed.value;
}

const user = (text: string) => ({ role: "user", parts: [{ text }] });

test("contents: system instruction, thought text as reasoning, calls matched to responses by name in order (or by id), inline data by MIME type", () => {
  const req = parse({
    systemInstruction: { parts: [{ text: "Be brief." }] },
    contents: [
      { role: "user", parts: [{ text: "Look" }, { inlineData: { mimeType: "image/png", data: "iVBO" } }] },
      {
        role: "model",
        parts: [
          { text: "hmm", thought: true },
          { functionCall: { name: "f", args: { a: 1 } }, thoughtSignature: "SIG" },
          { functionCall: { name: "f", args: { a: 2 } } },
        ],
      },
      { role: "user", parts: [{ functionResponse: { name: "f", response: { r: 1 } } }, { functionResponse: { name: "f", response: { r: 2 } } }] },
    ],
  });
  const [system, first, model, r1, r2] = req.messages;
  assert.deepEqual(system, { role: "system", content: "Be brief." });
  assert.deepEqual(first, {
    role: "user",
    content: [
      { type: "text", text: "Look" },
      { type: "image", data: "iVBO", mediaType: "image/png" },
    ],
  });
  assert.ok(model?.role === "assistant");
  assert.equal(model.reasoning, "hmm");
  const [c1, c2] = model.toolCalls ?? [];
  assert.ok(c1 && c2 && c1.id.startsWith("call_0__gx") && c2.id === "call_1");
  assert.deepEqual(
    [r1, r2],
    [
      { role: "tool", toolCallId: c1.id, content: '{"r":1}' },
      { role: "tool", toolCallId: "call_1", content: '{"r":2}' },
    ],
  );
  // The signature the client sent goes to a Gemini backend on its call.
  const body = JSON.parse(geminiBackend.request(req, { upstreamModel: "gemini-3-pro-preview", forceStreamUsage: false }).body?.toString("utf8") ?? "{}") as {
    contents: { parts: Record<string, unknown>[] }[];
  };
  assert.equal(body.contents[1]?.parts[0]?.thoughtSignature, "SIG");
  assert.equal(body.contents[1]?.parts[1]?.thoughtSignature, undefined);
});

test("tools, toolConfig and generationConfig map onto the canonical request", () => {
  const req = parse({
    contents: [user("x")],
    tools: [{ functionDeclarations: [{ name: "f", description: "d", parameters: { type: "OBJECT", properties: { a: { type: "STRING" } } } }] }],
    toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["f"] } },
    generationConfig: {
      temperature: 0.5,
      maxOutputTokens: 64,
      stopSequences: ["END"],
      responseMimeType: "application/json",
      thinkingConfig: { thinkingBudget: 2000 },
    },
  });
  assert.deepEqual(req.tools, [{ type: "function", name: "f", description: "d", parameters: { type: "object", properties: { a: { type: "string" } } } }]);
  assert.deepEqual(req.toolChoice, { type: "function", name: "f" });
  assert.deepEqual([req.temperature, req.maxTokens, req.stop, req.responseFormat, req.reasoningEffort], [0.5, 64, ["END"], { type: "json_object" }, "medium"]);
  assert.deepEqual(parse({ contents: [user("x")], toolConfig: { functionCallingConfig: { mode: "NONE" } } }).toolChoice, { type: "none" });
  assert.equal(parse({ contents: [user("x")], generationConfig: { thinkingConfig: { thinkingLevel: "HIGH" } } }).reasoningEffort, "high");
});

test("refused, naming the field", () => {
  const refuses = (body: Record<string, unknown>, param: string) => {
    const parsed = parseGeminiGenerateRequest(body, "m", false);
    assert.ok(!parsed.ok);
    assert.equal(parsed.errors[0]?.param, param);
  };
  refuses({ contents: [] }, "contents");
  refuses({ contents: [user("x")], tools: [{ codeExecution: {} }] }, "tools[0].codeExecution");
  refuses({ contents: [user("x")], cachedContent: "cachedContents/1" }, "cachedContent");
  refuses({ contents: [{ role: "model", parts: [{ executableCode: {} }] }] }, "contents[0].parts[0]");
  refuses({ contents: [user("x")], generationConfig: { responseMimeType: "text/x-enum" } }, "generationConfig.responseMimeType");
  refuses({ contents: [{ role: "user", parts: [{ functionResponse: { name: "g", response: {} } }] }] }, "contents[0].parts[0].functionResponse");
});

test("response: thought parts, text, calls with their Gemini id and signature, usage; a refusal is a blocked candidate; errors in Google's shape", () => {
  const id = "call_0__gx" + Buffer.from(JSON.stringify({ i: "fc-1", s: "SIG" })).toString("base64url");
  const out = JSON.parse(
    geminiClient
      .response(
        {
          id: "r",
          created: 1,
          model: "m",
          choices: [
            {
              index: 0,
              message: { role: "assistant", content: "Hi", reasoning: "think", toolCalls: [{ id, name: "f", arguments: '{"a":1}' }] },
              finishReason: "tool_calls",
            },
          ],
          usage: { inputTokens: 3, outputTokens: 7, totalTokens: 10, reasoningTokens: 4 },
          extra: {},
        },
        parse({ contents: [user("x")] }),
      )
      .toString("utf8"),
  ) as Record<string, unknown>;
  assert.deepEqual(out.candidates, [
    {
      content: {
        role: "model",
        parts: [{ text: "think", thought: true }, { text: "Hi" }, { functionCall: { name: "f", args: { a: 1 }, id: "fc-1" }, thoughtSignature: "SIG" }],
      },
      finishReason: "STOP",
      index: 0,
    },
  ]);
  assert.deepEqual(out.usageMetadata, { promptTokenCount: 3, candidatesTokenCount: 3, totalTokenCount: 10, thoughtsTokenCount: 4 });
  const refused = JSON.parse(
    geminiClient
      .response(
        {
          id: "r",
          created: 1,
          model: "m",
          choices: [{ index: 0, message: { role: "assistant", content: null, refusal: "No." }, finishReason: "content_filter" }],
          extra: {},
        },
        parse({ contents: [user("x")] }),
      )
      .toString("utf8"),
  ) as { candidates: Record<string, unknown>[] };
  assert.deepEqual(refused.candidates[0], { finishReason: "SAFETY", index: 0, finishMessage: "No." });
  assert.deepEqual(JSON.parse(geminiClient.error(new GatewayError(429, "rate_limit_error", "slow down")).toString("utf8")), {
    error: { code: 429, message: "slow down", status: "RESOURCE_EXHAUSTED" },
  });
});
