/**
 * Canonical `ChatRequest` → Gemini `generateContent` request body.
 *
 * Messages: system and developer messages, wherever they stand, become `systemInstruction`
 * (Gemini has one); `user` → role `user`, `assistant` → role `model`; tool results become
 * `functionResponse` parts in a `user` turn; consecutive turns of one role are merged into one
 * (parallel tool results then share a turn, as Gemini wants). Empty text parts are left out
 * of a turn that has others; a turn with nothing else is kept as `{text: ""}` (see `append`). Images and audio by value → `inlineData`; images by URL → `fileData`
 * with the MIME type of the URL's extension (`image/jpeg` when it has none, as Files API URIs
 * do; Gemini itself decides which URLs it can fetch); files → `inlineData` from their data URL
 * or file name (OpenAI file ids mean nothing to Gemini: 400). Not mapped, as Gemini has no
 * equivalent: `name`, image `detail`, `logit_bias`, `user`, `metadata`, `parallel_tool_calls`,
 * and the client schema's `extra`. Tool results are matched to their call by id, but Gemini
 * matches them by function name: the name comes from the latest earlier assistant call with
 * that id (a result for no known call is a 400).
 *
 * Thought signatures and call ids: a call Gemini made carries its `thoughtSignature` and its
 * `functionCall.id` in the canonical tool-call id (`gemini-call-id.ts`), so they go back exactly
 * as received: the signature on the call's part, the id on the call and on its
 * `functionResponse`. Gemini 3 rejects a history whose function calls lack a signature: for
 * models newer than 2.x, an assistant message none of whose calls has one (calls made by
 * another provider, or histories from before this) sends Google's documented placeholder
 * `skip_thought_signature_validator` on its first call.
 *
 * `reasoning_effort` → `thinkingConfig` (`thinkingBudget` for 2.x, `thinkingLevel` for later
 * models) with `includeThoughts: true` unless the effort is `none`, so the thought summaries come
 * back as the message's reasoning (`reasoning_content` for OpenAI clients).
 */
import { offeredTools } from "../../../common/canonical/tools.ts";
import type { AssistantMessage, ChatRequest, ContentPart, Message, ResponseFormat, TextPart, ToolChoice } from "../../../common/canonical/types.ts";
import { invalidRequest, unreachable } from "../../../common/errors.ts";
import { isObject, type JsonObject } from "../../../common/schemas/fields.ts";
import { decodeCallId } from "./gemini-call-id.ts";
import { isPreGemini3 } from "./gemini-model.ts";
import { asJsonSchema, needsJsonSchema, toGeminiParameters, toGeminiSchema } from "./gemini-schema.ts";

/** The placeholder signature Google documents for function calls it did not generate. */
export const SKIP_THOUGHT_SIGNATURE = "skip_thought_signature_validator";

/** One part of a Gemini `Content`, as Gearbox sends it. */
export interface GeminiPart {
  text?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { fileUri: string; mimeType: string };
  functionCall?: { name: string; args: JsonObject; id?: string };
  functionResponse?: { name: string; response: JsonObject; id?: string };
  thoughtSignature?: string;
}

/** One turn of the conversation. */
export interface GeminiContent {
  role: "user" | "model";
  parts: GeminiPart[];
}

/** `toolConfig.functionCallingConfig`: AUTO (model decides), ANY (must call; optionally only the named ones), NONE. */
export interface GeminiFunctionCallingConfig {
  mode: "AUTO" | "ANY" | "NONE";
  allowedFunctionNames?: string[];
}

/** The `generateContent` / `streamGenerateContent` body. */
export interface GeminiRequestBody {
  contents: GeminiContent[];
  systemInstruction?: { parts: { text: string }[] };
  tools?: { functionDeclarations: JsonObject[] }[];
  toolConfig?: { functionCallingConfig: GeminiFunctionCallingConfig };
  generationConfig?: JsonObject;
}

/** `reasoning_effort` → Gemini 2.x `thinkingBudget` (Google's OpenAI-compatibility table; `minimal` and `none` added). */
const THINKING_BUDGET: Readonly<Record<string, number>> = { none: 0, minimal: 512, low: 1024, medium: 8192, high: 24576 };
/** `reasoning_effort` → Gemini 3 `thinkingLevel` (`none` has no level: the lowest one). */
const THINKING_LEVEL: Readonly<Record<string, string>> = { none: "minimal", minimal: "minimal", low: "low", medium: "medium", high: "high" };

/** Extension → MIME type for URLs and file names (Gemini needs `mimeType` on every blob). */
const MIME_BY_EXTENSION: Readonly<Record<string, string>> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  webp: "image/webp",
  gif: "image/gif",
  heic: "image/heic",
  heif: "image/heif",
  pdf: "application/pdf",
  txt: "text/plain",
  md: "text/markdown",
  html: "text/html",
  csv: "text/csv",
  json: "application/json",
  wav: "audio/wav",
  mp3: "audio/mp3",
  aac: "audio/aac",
  ogg: "audio/ogg",
  flac: "audio/flac",
  mp4: "video/mp4",
  webm: "video/webm",
};
const DEFAULT_IMAGE_MIME = "image/jpeg";
const DATA_URL = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s;

/** Builds the request body; a request Gemini cannot express is a 400 `GatewayError` naming the field. */
export function toGeminiRequest(req: ChatRequest, model: string): GeminiRequestBody {
  const signature = isPreGemini3(model) ? undefined : SKIP_THOUGHT_SIGNATURE;
  const contents: GeminiContent[] = [];
  const system: { text: string }[] = [];
  req.messages.forEach((m, i) => {
    switch (m.role) {
      case "system":
      case "developer":
        for (const text of texts(m.content)) system.push({ text });
        return;
      case "user":
        return append(
          contents,
          "user",
          typeof m.content === "string" ? textParts(m.content) : m.content.flatMap((p, j) => userPart(p, `messages[${i}].content[${j}]`)),
        );
      case "assistant":
        return append(contents, "model", assistantParts(m, i, signature));
      case "tool":
        return append(contents, "user", [{ functionResponse: functionResponse(req.messages, i, m.toolCallId, m.content) }]);
      default:
        return unreachable(m, "message role");
    }
  });
  if (contents.length === 0) throw invalidRequest("Gemini needs at least one user, assistant or tool message besides system messages.", "messages");
  const body: GeminiRequestBody = { contents };
  if (system.length > 0) body.systemInstruction = { parts: system };
  const tools = req.toolChoice?.type === "allowed" && req.toolChoice.mode === "auto" ? offeredTools(req) : req.tools;
  if (tools && tools.length > 0) {
    const functionDeclarations = tools.map((t) => ({
      name: t.name,
      ...(t.description !== undefined && { description: t.description }),
      ...toGeminiParameters(t.parameters),
    }));
    body.tools = [{ functionDeclarations }];
  }
  if (req.toolChoice) body.toolConfig = { functionCallingConfig: functionCallingConfig(req.toolChoice) };
  const generationConfig = generationConfigOf(req, model);
  if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig;
  return body;
}

/**
 * Adds a turn, merged into the previous one of the same role. A turn with nothing in it (`""`, an
 * assistant turn without text or calls) stays, as `{text: ""}`, which Gemini accepts: dropping it
 * would merge the turns around it or start the request with a model turn.
 */
function append(contents: GeminiContent[], role: GeminiContent["role"], parts: GeminiPart[]): void {
  const last = contents.at(-1);
  if (last?.role === role) {
    if (parts.length === 0) return;
    if (isEmptyTurn(last)) last.parts = parts;
    else last.parts.push(...parts);
  } else contents.push({ role, parts: parts.length > 0 ? parts : [{ text: "" }] });
}

function isEmptyTurn(content: GeminiContent): boolean {
  const [only, ...rest] = content.parts;
  return rest.length === 0 && only !== undefined && "text" in only && only.text === "" && Object.keys(only).length === 1;
}

function texts(content: string | TextPart[] | null): string[] {
  if (content === null) return [];
  return (typeof content === "string" ? [content] : content.map((p) => p.text)).filter((t) => t.length > 0);
}

function textParts(content: string | TextPart[] | null): GeminiPart[] {
  return texts(content).map((text) => ({ text }));
}

function userPart(part: ContentPart, path: string): GeminiPart[] {
  switch (part.type) {
    case "text":
      return textParts(part.text);
    case "image":
      if (part.data !== undefined) return [{ inlineData: { mimeType: part.mediaType || DEFAULT_IMAGE_MIME, data: part.data } }];
      if (part.url !== undefined) return [{ fileData: { fileUri: part.url, mimeType: mimeOf(part.url) ?? DEFAULT_IMAGE_MIME } }];
      throw invalidRequest(`'${path}' has neither a URL nor data.`, path);
    case "audio":
      return [{ inlineData: { mimeType: MIME_BY_EXTENSION[part.format] ?? `audio/${part.format}`, data: part.data } }];
    case "file":
      return [filePart(part, path)];
    default:
      return unreachable(part, "content part");
  }
}

function filePart(part: Extract<ContentPart, { type: "file" }>, path: string): GeminiPart {
  if (part.data === undefined) {
    throw invalidRequest(`'${path}.file.file_id' cannot be sent to Gemini (an OpenAI file id); send the file inline as 'file_data'.`, `${path}.file`);
  }
  const match = DATA_URL.exec(part.data);
  if (match) return { inlineData: { mimeType: match[1] ?? "", data: match[2] ?? "" } };
  const mimeType = part.filename === undefined ? undefined : mimeOf(part.filename);
  if (mimeType === undefined) {
    throw invalidRequest(`'${path}.file.file_data' needs a data: URL or a 'filename' with a known extension: Gemini needs its MIME type.`, `${path}.file`);
  }
  return { inlineData: { mimeType, data: part.data } };
}

/** MIME type guessed from the extension of a URL path or file name. */
export function mimeOf(urlOrName: string): string | undefined {
  const extension = /\.([A-Za-z0-9]+)(?:[?#]|$)/.exec(urlOrName)?.[1]?.toLowerCase();
  return extension === undefined ? undefined : MIME_BY_EXTENSION[extension];
}

function assistantParts(m: AssistantMessage, i: number, signature: string | undefined): GeminiPart[] {
  const parts = textParts(m.content);
  if (parts.length === 0 && typeof m.refusal === "string" && m.refusal.length > 0) parts.push({ text: m.refusal });
  const calls = (m.toolCalls ?? []).map((call) => ({ call, data: decodeCallId(call.id) }));
  const signed = calls.some((c) => c.data.thoughtSignature !== undefined);
  calls.forEach(({ call, data }, j) => {
    const functionCall: NonNullable<GeminiPart["functionCall"]> = {
      name: call.name,
      args: toolArguments(call.arguments, `messages[${i}].tool_calls[${j}].function.arguments`),
    };
    if (data.id !== undefined) functionCall.id = data.id;
    const part: GeminiPart = { functionCall };
    if (data.thoughtSignature !== undefined) part.thoughtSignature = data.thoughtSignature;
    else if (j === 0 && !signed && signature !== undefined) part.thoughtSignature = signature;
    parts.push(part);
  });
  return parts;
}

function toolArguments(text: string, param: string): JsonObject {
  if (text.trim() === "") return {};
  let args: unknown;
  try {
    args = JSON.parse(text);
  } catch {
    throw invalidRequest(`'${param}' is not valid JSON; Gemini needs tool call arguments as a JSON object.`, param, "invalid_tool_arguments");
  }
  if (!isObject(args)) throw invalidRequest(`'${param}' must be a JSON object for Gemini.`, param, "invalid_tool_arguments");
  return args;
}

/** A tool result as a `functionResponse`: the called function's name, and Gemini's call id when it gave one. */
function functionResponse(
  messages: readonly Message[],
  index: number,
  toolCallId: string,
  content: string | TextPart[],
): NonNullable<GeminiPart["functionResponse"]> {
  const out: NonNullable<GeminiPart["functionResponse"]> = { name: toolName(messages, index, toolCallId), response: toolResponse(content) };
  const id = decodeCallId(toolCallId).id;
  if (id !== undefined) out.id = id;
  return out;
}

/** The function name of the tool call a result answers: Gemini matches results by name, not id. */
function toolName(messages: readonly Message[], index: number, toolCallId: string): string {
  for (let k = index - 1; k >= 0; k -= 1) {
    const m = messages[k];
    const call = m?.role === "assistant" ? m.toolCalls?.find((c) => c.id === toolCallId) : undefined;
    if (call) return call.name;
  }
  const param = `messages[${index}].tool_call_id`;
  throw invalidRequest(`'${param}' ('${toolCallId}') answers no tool call of an earlier assistant message; Gemini needs the function's name.`, param);
}

/** Gemini's `response` must be an object: JSON objects pass, other JSON and plain text are wrapped as `{result}`. */
function toolResponse(content: string | TextPart[]): JsonObject {
  const text = typeof content === "string" ? content : content.map((p) => p.text).join("");
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : { result: value };
  } catch {
    return { result: text };
  }
}

function functionCallingConfig(choice: ToolChoice): GeminiFunctionCallingConfig {
  switch (choice.type) {
    case "auto":
      return { mode: "AUTO" };
    case "none":
      return { mode: "NONE" };
    case "required":
      return { mode: "ANY" };
    case "function":
      return { mode: "ANY", allowedFunctionNames: [choice.name] };
    case "allowed":
      // Gemini restricts calls only under ANY; under AUTO the declarations are filtered instead.
      return choice.mode === "required" ? { mode: "ANY", allowedFunctionNames: choice.names } : { mode: "AUTO" };
    default:
      return unreachable(choice, "tool choice");
  }
}

function generationConfigOf(req: ChatRequest, model: string): JsonObject {
  const config: JsonObject = {};
  const set = (key: string, value: unknown): void => {
    if (value !== undefined) config[key] = value;
  };
  set("temperature", req.temperature);
  set("topP", req.topP);
  set("maxOutputTokens", req.maxTokens);
  set("stopSequences", req.stop);
  set("candidateCount", req.n);
  set("seed", req.seed);
  set("presencePenalty", req.presencePenalty);
  set("frequencyPenalty", req.frequencyPenalty);
  if (req.logprobs === true) {
    config.responseLogprobs = true;
    if (req.topLogprobs !== undefined && req.topLogprobs > 0) config.logprobs = req.topLogprobs;
  }
  if (req.responseFormat) applyResponseFormat(config, req.responseFormat);
  if (req.reasoningEffort !== undefined) config.thinkingConfig = thinkingConfig(req.reasoningEffort, model);
  return config;
}

function applyResponseFormat(config: JsonObject, format: ResponseFormat): void {
  switch (format.type) {
    case "text":
      return;
    case "json_object":
      config.responseMimeType = "application/json";
      return;
    case "json_schema": {
      config.responseMimeType = "application/json";
      if (format.schema === undefined) return;
      if (needsJsonSchema(format.schema)) {
        config.responseJsonSchema = asJsonSchema(format.schema);
        return;
      }
      const schema = toGeminiSchema(format.schema);
      if (schema.type !== "object" || schema.properties !== undefined) config.responseSchema = schema;
      return;
    }
    default:
      return unreachable(format, "response format");
  }
}

function thinkingConfig(effort: string, model: string): JsonObject {
  const budget = THINKING_BUDGET[effort];
  const level = THINKING_LEVEL[effort];
  if (budget === undefined || level === undefined) {
    throw invalidRequest(
      `'reasoning_effort' must be one of ${Object.keys(THINKING_BUDGET)
        .map((e) => `'${e}'`)
        .join(", ")} for Gemini, got '${effort}'.`,
      "reasoning_effort",
    );
  }
  const config: JsonObject = isPreGemini3(model) ? { thinkingBudget: budget } : { thinkingLevel: level };
  if (effort !== "none") config.includeThoughts = true;
  return config;
}
