/**
 * Gemini `generateContent` / `streamGenerateContent` request (Google's SDKs) → canonical
 * `ChatRequest`. The model and whether it streams come from the path
 * (`/v1beta/models/{model}:{method}`), not the body.
 *
 * - `systemInstruction.parts[].text` → a system message; `contents[]` → messages: role `user`
 *   (text, `inlineData` → image / audio / file by MIME type, `fileData` → image URL), role
 *   `model` → assistant (text; `thought: true` text → reasoning; `functionCall` → tool calls);
 *   `functionResponse` parts → tool messages. Calls without Gemini's `id` get `call_<n>`
 *   (counted over the request), and a response without `id` answers the earliest unanswered call
 *   of its function (Gemini matches them by name). A `thoughtSignature` on a call stays with it
 *   (packed into the canonical id, `gemini-call-id`), so a Gemini backend gets it back.
 * - `tools[].functionDeclarations` (`parameters` or `parametersJsonSchema`) → function tools;
 *   `toolConfig.functionCallingConfig`: AUTO → auto, ANY → required (with
 *   `allowedFunctionNames`: one → that function, several → allowed/required), NONE → none.
 * - `generationConfig`: temperature, topP, maxOutputTokens, stopSequences, candidateCount,
 *   seed, presence/frequencyPenalty, `responseMimeType: application/json` (+ `responseSchema` /
 *   `responseJsonSchema`) → the response format; `thinkingConfig` (`thinkingLevel`, or
 *   `thinkingBudget`: 0 none, ≤1024 low, ≤8192 medium, more high) → reasoning effort.
 * - Refused with a 400 naming the field: Gemini's own tools (`googleSearch`, `codeExecution`,
 *   `urlContext`, …), `cachedContent` (Google-side state), parts Gearbox cannot carry
 *   (`executableCode`, `videoMetadata`…).
 */
import type {
  AssistantMessage,
  ChatRequest,
  ContentPart,
  FunctionTool,
  Message,
  ResponseFormat,
  ToolCall,
  ToolChoice,
} from "../../../common/canonical/types.ts";
import { fail, ok, type Result } from "../../../common/result.ts";
import { extraFields, FieldReader, isObject, type FieldError, type JsonObject } from "../../../common/schemas/fields.ts";
import { encodeCallId } from "../backends/gemini-call-id.ts";

const KNOWN_FIELDS: ReadonlySet<string> = new Set([
  "contents",
  "systemInstruction",
  "tools",
  "toolConfig",
  "generationConfig",
  "safetySettings",
  "cachedContent",
  "model",
]);

/** Parses a body for `model`; `stream` from the method the path named. */
export function parseGeminiGenerateRequest(json: unknown, model: string, stream: boolean): Result<ChatRequest, FieldError> {
  const r = new FieldReader();
  if (!isObject(json)) return fail({ param: "", message: "The request body must be a JSON object." });
  if (json.cachedContent !== undefined) r.fail("cachedContent", "'cachedContent' names Google-side state Gearbox cannot read; send the content itself.");
  const messages: Message[] = [];
  const system = r.object(json, "systemInstruction", "systemInstruction");
  if (system) {
    const texts = (r.array(system, "parts", "systemInstruction.parts") ?? []).map((p, i) =>
      isObject(p) && typeof p.text === "string" ? p.text : r.fail(`systemInstruction.parts[${i}].text`, `'systemInstruction.parts[${i}].text' is required.`),
    );
    const text = texts.filter((t): t is string => t !== undefined).join("\n");
    if (text !== "") messages.push({ role: "system", content: text });
  }
  const contents = r.array(json, "contents", "contents", true);
  if (contents && contents.length === 0) r.fail("contents", "'contents' must hold at least one content.");
  const calls = new Calls();
  contents?.forEach((c, i) => readContent(r, c, `contents[${i}]`, calls, messages));

  const request: ChatRequest = { model, messages, stream, extra: extraFields(json, KNOWN_FIELDS) };
  if (stream) request.includeUsage = true;
  const tools = readTools(r, json);
  if (tools) request.tools = tools;
  const choice = readToolConfig(r, json);
  if (choice) request.toolChoice = choice;
  readGenerationConfig(r, json, request);
  return r.errors.length > 0 ? fail(...r.errors) : ok(request);
}

/** Call ids over the request, and which calls still wait for their response. */
class Calls {
  private n = 0;
  /** Calls not answered yet, with the id Gemini gave them. */
  private readonly open: { call: ToolCall; geminiId: string | undefined }[] = [];

  add(name: string, args: string, geminiId: string | undefined, signature: string | undefined): ToolCall {
    const data = { ...(geminiId !== undefined && { id: geminiId }), ...(signature !== undefined && { thoughtSignature: signature }) };
    const call: ToolCall = { id: encodeCallId(`call_${this.n++}`, data), name, arguments: args };
    this.open.push({ call, geminiId });
    return call;
  }

  /** The call a response answers: by Gemini's id when both have one, else the earliest open call of the function. */
  answer(name: string, geminiId: string | undefined): ToolCall | undefined {
    const at = this.open.findIndex((o) => (o.geminiId !== undefined && geminiId !== undefined ? o.geminiId === geminiId : o.call.name === name));
    if (at < 0) return undefined;
    return this.open.splice(at, 1)[0]?.call;
  }
}

function readContent(r: FieldReader, raw: unknown, p: string, calls: Calls, out: Message[]): void {
  if (!isObject(raw)) return void r.fail(p, `'${p}' must be an object.`);
  const role = r.oneOf(raw, "role", `${p}.role`, ["user", "model", "function"] as const) ?? "user";
  const parts = r.array(raw, "parts", `${p}.parts`, true) ?? [];
  if (role === "model") {
    const message: AssistantMessage = { role: "assistant", content: null };
    let text = "";
    let reasoning = "";
    parts.forEach((part, j) => {
      const q = `${p}.parts[${j}]`;
      if (!isObject(part)) return r.fail(q, `'${q}' must be an object.`);
      if (typeof part.text === "string") {
        if (part.thought === true) reasoning += part.text;
        else text += part.text;
      } else if (isObject(part.functionCall)) {
        const name = r.string(part.functionCall, "name", `${q}.functionCall.name`, true);
        const args = part.functionCall.args === undefined ? {} : part.functionCall.args;
        if (!isObject(args)) return r.fail(`${q}.functionCall.args`, `'${q}.functionCall.args' must be an object.`);
        const id = r.string(part.functionCall, "id", `${q}.functionCall.id`);
        const signature = typeof part.thoughtSignature === "string" ? part.thoughtSignature : undefined;
        if (name !== undefined) (message.toolCalls ??= []).push(calls.add(name, JSON.stringify(args), id, signature));
      } else if (part.thoughtSignature === undefined || Object.keys(part).length > 1) {
        return r.fail(q, `'${q}' is not a part Gearbox can carry in a model turn (text, functionCall).`);
      }
      return undefined;
    });
    if (text !== "") message.content = text;
    if (reasoning !== "") message.reasoning = reasoning;
    out.push(message);
    return;
  }
  const content: ContentPart[] = [];
  parts.forEach((part, j) => {
    const q = `${p}.parts[${j}]`;
    if (!isObject(part)) return r.fail(q, `'${q}' must be an object.`);
    if (typeof part.text === "string") return void content.push({ type: "text", text: part.text });
    if (isObject(part.functionResponse)) {
      const name = r.string(part.functionResponse, "name", `${q}.functionResponse.name`, true);
      const id = r.string(part.functionResponse, "id", `${q}.functionResponse.id`);
      const response = part.functionResponse.response;
      if (name === undefined) return undefined;
      const call = calls.answer(name, id);
      if (!call) return r.fail(`${q}.functionResponse`, `'${q}.functionResponse' ('${name}') answers no earlier functionCall of the model.`);
      flush(content, out);
      out.push({ role: "tool", toolCallId: call.id, content: JSON.stringify(response ?? {}) });
      return undefined;
    }
    if (isObject(part.inlineData)) {
      const mimeType = r.string(part.inlineData, "mimeType", `${q}.inlineData.mimeType`, true) ?? "";
      const data = r.string(part.inlineData, "data", `${q}.inlineData.data`, true) ?? "";
      if (mimeType.startsWith("image/")) content.push({ type: "image", data, mediaType: mimeType });
      else if (mimeType.startsWith("audio/")) content.push({ type: "audio", data, format: mimeType.slice("audio/".length) });
      else content.push({ type: "file", data: `data:${mimeType};base64,${data}` });
      return undefined;
    }
    if (isObject(part.fileData)) {
      const uri = r.string(part.fileData, "fileUri", `${q}.fileData.fileUri`, true);
      if (uri !== undefined) content.push({ type: "image", url: uri });
      return undefined;
    }
    return r.fail(q, `'${q}' is not a part Gearbox can translate (text, inlineData, fileData, functionResponse).`);
  });
  flush(content, out);
}

/** Ends the user turn gathered so far (if any). */
function flush(content: ContentPart[], out: Message[]): void {
  if (content.length === 0) return;
  const parts = content.splice(0);
  const only = parts[0];
  out.push({ role: "user", content: parts.length === 1 && only?.type === "text" ? only.text : parts });
}

function readTools(r: FieldReader, json: JsonObject): FunctionTool[] | undefined {
  const list = r.array(json, "tools", "tools");
  if (!list) return undefined;
  const tools: FunctionTool[] = [];
  list.forEach((tool, i) => {
    const p = `tools[${i}]`;
    if (!isObject(tool)) return r.fail(p, `'${p}' must be an object.`);
    const other = Object.keys(tool).find((k) => k !== "functionDeclarations");
    if (other !== undefined)
      return r.fail(`${p}.${other}`, `'${p}.${other}' is one of Gemini's own tools, which Gearbox does not translate; offer functionDeclarations.`);
    (r.array(tool, "functionDeclarations", `${p}.functionDeclarations`) ?? []).forEach((d, j) => {
      const q = `${p}.functionDeclarations[${j}]`;
      if (!isObject(d)) return r.fail(q, `'${q}' must be an object.`);
      const name = r.string(d, "name", `${q}.name`, true);
      const description = r.string(d, "description", `${q}.description`);
      const parameters = r.object(d, "parametersJsonSchema", `${q}.parametersJsonSchema`) ?? r.object(d, "parameters", `${q}.parameters`);
      if (name === undefined) return undefined;
      const out: FunctionTool = { type: "function", name };
      if (description !== undefined) out.description = description;
      if (parameters !== undefined) out.parameters = lowerTypes(parameters) as Record<string, unknown>;
      tools.push(out);
      return undefined;
    });
    return undefined;
  });
  return tools;
}

/** Gemini's OpenAPI `Schema` spells types in capitals (`OBJECT`); JSON Schema in lower case. */
function lowerTypes(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(lowerTypes);
  if (!isObject(schema)) return schema;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(schema)) out[k] = k === "type" && typeof v === "string" ? v.toLowerCase() : lowerTypes(v);
  return out;
}

function readToolConfig(r: FieldReader, json: JsonObject): ToolChoice | undefined {
  const config = r.object(json, "toolConfig", "toolConfig");
  const calling = config && r.object(config, "functionCallingConfig", "toolConfig.functionCallingConfig");
  if (!calling) return undefined;
  const mode = r.oneOf(calling, "mode", "toolConfig.functionCallingConfig.mode", ["AUTO", "ANY", "NONE", "VALIDATED", "MODE_UNSPECIFIED"] as const);
  const names = (r.array(calling, "allowedFunctionNames", "toolConfig.functionCallingConfig.allowedFunctionNames") ?? []).filter(
    (n): n is string => typeof n === "string",
  );
  switch (mode) {
    case "ANY":
      if (names.length === 1 && names[0] !== undefined) return { type: "function", name: names[0] };
      return names.length > 1 ? { type: "allowed", mode: "required", names } : { type: "required" };
    case "NONE":
      return { type: "none" };
    case undefined:
      return undefined;
    case "AUTO":
    case "VALIDATED":
    case "MODE_UNSPECIFIED":
      return names.length > 0 ? { type: "allowed", mode: "auto", names } : { type: "auto" };
    default:
      return mode satisfies never;
  }
}

function readGenerationConfig(r: FieldReader, json: JsonObject, req: ChatRequest): void {
  const g = r.object(json, "generationConfig", "generationConfig");
  if (!g) return;
  const p = (k: string) => `generationConfig.${k}`;
  const set = <K extends keyof ChatRequest>(key: K, value: ChatRequest[K] | undefined): void => {
    if (value !== undefined) req[key] = value;
  };
  set("temperature", r.number(g, "temperature", p("temperature"), { min: 0, max: 2 }));
  set("topP", r.number(g, "topP", p("topP"), { min: 0, max: 1 }));
  set("maxTokens", r.number(g, "maxOutputTokens", p("maxOutputTokens"), { min: 1, integer: true }));
  set("n", r.number(g, "candidateCount", p("candidateCount"), { min: 1, integer: true }));
  set("seed", r.number(g, "seed", p("seed"), { integer: true }));
  set("presencePenalty", r.number(g, "presencePenalty", p("presencePenalty")));
  set("frequencyPenalty", r.number(g, "frequencyPenalty", p("frequencyPenalty")));
  const stop = r.array(g, "stopSequences", p("stopSequences"));
  if (stop)
    set(
      "stop",
      stop.map((s, i) => (typeof s === "string" ? s : (r.fail(`${p("stopSequences")}[${i}]`, `'${p("stopSequences")}[${i}]' must be a string.`) ?? ""))),
    );
  const mime = r.string(g, "responseMimeType", p("responseMimeType"));
  if (mime === "application/json") {
    const schema = r.object(g, "responseJsonSchema", p("responseJsonSchema")) ?? r.object(g, "responseSchema", p("responseSchema"));
    const format: ResponseFormat = schema
      ? { type: "json_schema", name: "response", schema: lowerTypes(schema) as Record<string, unknown> }
      : { type: "json_object" };
    req.responseFormat = format;
  } else if (mime !== undefined && mime !== "text/plain")
    r.fail(p("responseMimeType"), `'${p("responseMimeType")}' must be 'text/plain' or 'application/json', got '${mime}'.`);
  const thinking = r.object(g, "thinkingConfig", p("thinkingConfig"));
  if (thinking) {
    const level = r.oneOf(thinking, "thinkingLevel", `${p("thinkingConfig")}.thinkingLevel`, [
      "minimal",
      "low",
      "medium",
      "high",
      "MINIMAL",
      "LOW",
      "MEDIUM",
      "HIGH",
    ] as const);
    const budget = r.number(thinking, "thinkingBudget", `${p("thinkingConfig")}.thinkingBudget`, { min: -1, integer: true });
    if (level !== undefined) req.reasoningEffort = level.toLowerCase();
    else if (budget !== undefined && budget >= 0) req.reasoningEffort = budget === 0 ? "none" : budget <= 1024 ? "low" : budget <= 8192 ? "medium" : "high";
  }
}
