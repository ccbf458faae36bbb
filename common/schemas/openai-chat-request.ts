/**
 * OpenAI Chat Completions request ⇄ canonical `ChatRequest`. Parsing validates every field it
 * reads and names the first bad one; emitting writes OpenAI's wire JSON back, extras included,
 * so OpenAI → canonical → OpenAI is lossless for everything OpenAI documents.
 */
import type { ChatRequest, ContentPart, FunctionTool, Message, ResponseFormat, TextPart, ToolCall, ToolChoice } from "../canonical/types.ts";
import { fail, ok, type Result } from "../result.ts";
import { extraFields, FieldReader, isObject, type FieldError, type JsonObject } from "./fields.ts";

const KNOWN_FIELDS = new Set([
  "model",
  "messages",
  "stream",
  "stream_options",
  "max_tokens",
  "max_completion_tokens",
  "temperature",
  "top_p",
  "n",
  "stop",
  "presence_penalty",
  "frequency_penalty",
  "logit_bias",
  "logprobs",
  "top_logprobs",
  "seed",
  "user",
  "metadata",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "response_format",
  "reasoning_effort",
]);

const ROLES = ["system", "developer", "user", "assistant", "tool", "function"] as const;

/** Parses an OpenAI chat request body (already JSON-decoded) into the canonical model. */
export function parseOpenAIChatRequest(json: unknown): Result<ChatRequest, FieldError> {
  const r = new FieldReader();
  if (!isObject(json)) return fail({ param: "", message: "The request body must be a JSON object." });

  const model = r.string(json, "model", "model", true);
  if (model === "") r.fail("model", "'model' must not be empty.");
  const rawMessages = r.array(json, "messages", "messages", true);
  if (rawMessages && rawMessages.length === 0) r.fail("messages", "'messages' must contain at least one message.");
  const messages: Message[] = [];
  rawMessages?.forEach((m, i) => {
    const message = readMessage(r, m, `messages[${i}]`);
    if (message) messages.push(message);
  });

  const streamOptions = r.object(json, "stream_options", "stream_options");
  const maxCompletion = r.number(json, "max_completion_tokens", "max_completion_tokens", { min: 1, integer: true });
  const maxLegacy = r.number(json, "max_tokens", "max_tokens", { min: 1, integer: true });
  const request: ChatRequest = {
    model: model ?? "",
    messages,
    stream: r.boolean(json, "stream", "stream") ?? false,
    extra: extraFields(json, KNOWN_FIELDS),
  };
  const includeUsage = streamOptions && r.boolean(streamOptions, "include_usage", "stream_options.include_usage");
  if (includeUsage !== undefined) request.includeUsage = includeUsage;
  if (maxCompletion !== undefined) {
    request.maxTokens = maxCompletion;
    request.maxTokensParam = "max_completion_tokens";
  } else if (maxLegacy !== undefined) {
    request.maxTokens = maxLegacy;
    request.maxTokensParam = "max_tokens";
  }
  assign(request, "temperature", r.number(json, "temperature", "temperature", { min: 0, max: 2 }));
  assign(request, "topP", r.number(json, "top_p", "top_p", { min: 0, max: 1 }));
  assign(request, "n", r.number(json, "n", "n", { min: 1, max: 128, integer: true }));
  assign(request, "stop", readStop(r, json));
  assign(request, "presencePenalty", r.number(json, "presence_penalty", "presence_penalty", { min: -2, max: 2 }));
  assign(request, "frequencyPenalty", r.number(json, "frequency_penalty", "frequency_penalty", { min: -2, max: 2 }));
  assign(request, "logitBias", readLogitBias(r, json));
  assign(request, "logprobs", r.boolean(json, "logprobs", "logprobs"));
  assign(request, "topLogprobs", r.number(json, "top_logprobs", "top_logprobs", { min: 0, max: 20, integer: true }));
  assign(request, "seed", r.number(json, "seed", "seed", { integer: true }));
  assign(request, "user", r.string(json, "user", "user"));
  assign(request, "metadata", r.stringMap(json, "metadata", "metadata"));
  assign(request, "tools", readTools(r, json));
  assign(request, "toolChoice", readToolChoice(r, json));
  assign(request, "parallelToolCalls", r.boolean(json, "parallel_tool_calls", "parallel_tool_calls"));
  assign(request, "responseFormat", readResponseFormat(r, json));
  assign(request, "reasoningEffort", r.string(json, "reasoning_effort", "reasoning_effort"));
  if (request.stream === false && streamOptions) r.fail("stream_options", "'stream_options' is only allowed when 'stream' is true.");

  return r.errors.length > 0 ? fail(...r.errors) : ok(request);
}

function assign<K extends keyof ChatRequest>(target: ChatRequest, key: K, value: ChatRequest[K] | undefined): void {
  if (value !== undefined) target[key] = value;
}

function readMessage(r: FieldReader, raw: unknown, path: string): Message | undefined {
  if (!isObject(raw)) return r.fail(path, `'${path}' must be an object.`);
  const role = r.oneOf(raw, "role", `${path}.role`, ROLES);
  if (role === undefined) return raw.role === undefined ? r.fail(`${path}.role`, `'${path}.role' is required.`) : undefined;
  const name = r.string(raw, "name", `${path}.name`);
  switch (role) {
    case "system":
    case "developer": {
      const content = readTextContent(r, raw, `${path}.content`, true);
      if (content === undefined) return undefined;
      return name === undefined ? { role, content } : { role, content, name };
    }
    case "user": {
      const content = readUserContent(r, raw, `${path}.content`);
      if (content === undefined) return undefined;
      return name === undefined ? { role, content } : { role, content, name };
    }
    case "assistant":
      return readAssistant(r, raw, path, name);
    case "tool": {
      const toolCallId = r.string(raw, "tool_call_id", `${path}.tool_call_id`, true);
      const content = readTextContent(r, raw, `${path}.content`, true);
      if (toolCallId === undefined || content === undefined) return undefined;
      return { role: "tool", toolCallId, content };
    }
    case "function": {
      // Deprecated `function` role: the result of a legacy function call, keyed by name.
      const content = readTextContent(r, raw, `${path}.content`, true);
      const fn = r.string(raw, "name", `${path}.name`, true);
      if (content === undefined || fn === undefined) return undefined;
      return { role: "tool", toolCallId: fn, content };
    }
    default:
      return role satisfies never;
  }
}

function readAssistant(r: FieldReader, raw: JsonObject, path: string, name: string | undefined): Message | undefined {
  const toolCalls = readToolCalls(r, raw, path);
  const hasContent = raw.content !== undefined && raw.content !== null;
  const content = hasContent ? readTextContent(r, raw, `${path}.content`, true) : null;
  if (content === undefined) return undefined;
  if (!hasContent && !toolCalls && raw.function_call === undefined) {
    return r.fail(`${path}.content`, `'${path}.content' is required unless 'tool_calls' is given.`);
  }
  const message: Message = { role: "assistant", content };
  if (name !== undefined) message.name = name;
  if (toolCalls) message.toolCalls = toolCalls;
  const refusal = raw.refusal === null ? null : r.string(raw, "refusal", `${path}.refusal`);
  if (refusal !== undefined) message.refusal = refusal;
  const legacy = r.object(raw, "function_call", `${path}.function_call`);
  if (legacy && !toolCalls) {
    const fnName = r.string(legacy, "name", `${path}.function_call.name`, true) ?? "";
    const args = r.string(legacy, "arguments", `${path}.function_call.arguments`) ?? "";
    message.toolCalls = [{ id: fnName, name: fnName, arguments: args }];
  }
  return message;
}

function readToolCalls(r: FieldReader, raw: JsonObject, path: string): ToolCall[] | undefined {
  const list = r.array(raw, "tool_calls", `${path}.tool_calls`);
  if (!list) return undefined;
  const calls: ToolCall[] = [];
  list.forEach((item, i) => {
    const p = `${path}.tool_calls[${i}]`;
    if (!isObject(item)) return r.fail(p, `'${p}' must be an object.`);
    const id = r.string(item, "id", `${p}.id`, true);
    if (item.type !== undefined && item.type !== "function") return r.fail(`${p}.type`, `'${p}.type' must be 'function'.`);
    const fn = r.object(item, "function", `${p}.function`);
    if (!fn) return r.fail(`${p}.function`, `'${p}.function' is required.`);
    const name = r.string(fn, "name", `${p}.function.name`, true);
    const args = r.string(fn, "arguments", `${p}.function.arguments`, true);
    if (id !== undefined && name !== undefined && args !== undefined) calls.push({ id, name, arguments: args });
  });
  return calls;
}

/** Content that may only hold text: a string or an array of text parts. */
function readTextContent(r: FieldReader, raw: JsonObject, path: string, required: boolean): string | TextPart[] | undefined {
  const value = raw.content;
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return required ? r.fail(path, `'${path}' is required.`) : undefined;
  if (!Array.isArray(value)) return r.fail(path, `'${path}' must be a string or an array of content parts.`);
  const parts: TextPart[] = [];
  value.forEach((part, i) => {
    const p = `${path}[${i}]`;
    if (!isObject(part) || part.type !== "text") return r.fail(`${p}.type`, `'${p}.type' must be 'text' here.`);
    const text = r.string(part, "text", `${p}.text`, true);
    if (text !== undefined) parts.push({ type: "text", text });
  });
  return parts;
}

function readUserContent(r: FieldReader, raw: JsonObject, path: string): string | ContentPart[] | undefined {
  const value = raw.content;
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return r.fail(path, `'${path}' is required.`);
  if (!Array.isArray(value)) return r.fail(path, `'${path}' must be a string or an array of content parts.`);
  const parts: ContentPart[] = [];
  value.forEach((part, i) => {
    const parsed = readContentPart(r, part, `${path}[${i}]`);
    if (parsed) parts.push(parsed);
  });
  return parts;
}

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

function readContentPart(r: FieldReader, part: unknown, p: string): ContentPart | undefined {
  if (!isObject(part)) return r.fail(p, `'${p}' must be an object.`);
  const type = r.oneOf(part, "type", `${p}.type`, ["text", "image_url", "input_audio", "file"] as const);
  if (type === undefined) return part.type === undefined ? r.fail(`${p}.type`, `'${p}.type' is required.`) : undefined;
  switch (type) {
    case "text": {
      const text = r.string(part, "text", `${p}.text`, true);
      return text === undefined ? undefined : { type: "text", text };
    }
    case "image_url": {
      const image = r.object(part, "image_url", `${p}.image_url`);
      if (!image) return r.fail(`${p}.image_url`, `'${p}.image_url' is required.`);
      const url = r.string(image, "url", `${p}.image_url.url`, true);
      const detail = r.oneOf(image, "detail", `${p}.image_url.detail`, ["auto", "low", "high"] as const);
      if (url === undefined) return undefined;
      const match = DATA_URL.exec(url);
      const out: ContentPart = match ? { type: "image", mediaType: match[1] ?? "", data: match[2] ?? "" } : { type: "image", url };
      if (detail !== undefined) out.detail = detail;
      return out;
    }
    case "input_audio": {
      const audio = r.object(part, "input_audio", `${p}.input_audio`);
      if (!audio) return r.fail(`${p}.input_audio`, `'${p}.input_audio' is required.`);
      const data = r.string(audio, "data", `${p}.input_audio.data`, true);
      const format = r.string(audio, "format", `${p}.input_audio.format`, true);
      return data === undefined || format === undefined ? undefined : { type: "audio", data, format };
    }
    case "file": {
      const file = r.object(part, "file", `${p}.file`);
      if (!file) return r.fail(`${p}.file`, `'${p}.file' is required.`);
      const out: ContentPart = { type: "file" };
      const fileId = r.string(file, "file_id", `${p}.file.file_id`);
      const filename = r.string(file, "filename", `${p}.file.filename`);
      const data = r.string(file, "file_data", `${p}.file.file_data`);
      if (fileId !== undefined) out.fileId = fileId;
      if (filename !== undefined) out.filename = filename;
      if (data !== undefined) out.data = data;
      return out;
    }
    default:
      return type satisfies never;
  }
}

function readStop(r: FieldReader, json: JsonObject): string[] | undefined {
  const value = json.stop;
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return [value];
  if (Array.isArray(value) && value.every((s) => typeof s === "string")) {
    if (value.length > 4) return r.fail("stop", "'stop' may hold at most 4 sequences.");
    return value;
  }
  return r.fail("stop", "'stop' must be a string or an array of strings.");
}

function readLogitBias(r: FieldReader, json: JsonObject): Record<string, number> | undefined {
  const bias = r.object(json, "logit_bias", "logit_bias");
  if (!bias) return undefined;
  for (const [token, value] of Object.entries(bias)) {
    if (typeof value !== "number" || value < -100 || value > 100) {
      return r.fail(`logit_bias.${token}`, `'logit_bias.${token}' must be a number from -100 to 100.`);
    }
  }
  return bias as Record<string, number>;
}

function readTools(r: FieldReader, json: JsonObject): FunctionTool[] | undefined {
  const list = r.array(json, "tools", "tools");
  if (!list) return undefined;
  const tools: FunctionTool[] = [];
  list.forEach((item, i) => {
    const p = `tools[${i}]`;
    if (!isObject(item)) return r.fail(p, `'${p}' must be an object.`);
    // Some providers (Mistral) accept a tool without `type`; it can only be a function.
    if (item.type !== "function" && item.type !== undefined) return r.fail(`${p}.type`, `'${p}.type' must be 'function'.`);
    const fn = r.object(item, "function", `${p}.function`);
    if (!fn) return r.fail(`${p}.function`, `'${p}.function' is required.`);
    const name = r.string(fn, "name", `${p}.function.name`, true);
    if (name === undefined) return undefined;
    if (!/^[a-zA-Z0-9_-]{1,64}$/.test(name)) {
      return r.fail(`${p}.function.name`, `'${p}.function.name' must be 1-64 characters of a-z, A-Z, 0-9, _ or -.`);
    }
    const tool: FunctionTool = { type: "function", name };
    const description = r.string(fn, "description", `${p}.function.description`);
    const parameters = r.object(fn, "parameters", `${p}.function.parameters`);
    const strict = r.boolean(fn, "strict", `${p}.function.strict`);
    if (description !== undefined) tool.description = description;
    if (parameters !== undefined) tool.parameters = parameters;
    if (strict !== undefined) tool.strict = strict;
    tools.push(tool);
  });
  return tools;
}

function readToolChoice(r: FieldReader, json: JsonObject): ToolChoice | undefined {
  const value = json.tool_choice;
  if (value === undefined || value === null) return undefined;
  if (value === "auto" || value === "none" || value === "required") return { type: value };
  // `{function: {name}}` without a type is a function choice (Hugging Face accepts it).
  if (isObject(value) && (value.type === "function" || value.type === undefined) && isObject(value.function)) {
    const name = r.string(value.function, "name", "tool_choice.function.name", true);
    return name === undefined ? undefined : { type: "function", name };
  }
  if (isObject(value) && value.type === "allowed_tools") return readAllowedTools(r, value);
  return r.fail(
    "tool_choice",
    '\'tool_choice\' must be \'auto\', \'none\', \'required\', {"type":"function","function":{"name":...}} or {"type":"allowed_tools",...}.',
  );
}

/** `{type: "allowed_tools", allowed_tools: {mode: "auto"|"required", tools: [{type: "function", function: {name}}]}}`. */
function readAllowedTools(r: FieldReader, value: JsonObject): ToolChoice | undefined {
  const spec = r.object(value, "allowed_tools", "tool_choice.allowed_tools");
  if (!spec) return r.fail("tool_choice.allowed_tools", "'tool_choice.allowed_tools' is required.");
  const mode = r.oneOf(spec, "mode", "tool_choice.allowed_tools.mode", ["auto", "required"] as const);
  const list = r.array(spec, "tools", "tool_choice.allowed_tools.tools", true);
  if (mode === undefined || !list)
    return spec.mode === undefined ? r.fail("tool_choice.allowed_tools.mode", "'tool_choice.allowed_tools.mode' is required.") : undefined;
  const names: string[] = [];
  list.forEach((t, i) => {
    const p = `tool_choice.allowed_tools.tools[${i}]`;
    const fn = isObject(t) && (t.type === "function" || t.type === undefined) ? r.object(t, "function", `${p}.function`) : undefined;
    // The Responses API's flat form `{type: "function", name}` too.
    const name = fn ? r.string(fn, "name", `${p}.function.name`, true) : isObject(t) && typeof t.name === "string" ? t.name : undefined;
    if (name === undefined) return r.fail(p, `'${p}' must be a function tool: {"type":"function","function":{"name":...}}.`);
    names.push(name);
  });
  return { type: "allowed", mode, names };
}

function readResponseFormat(r: FieldReader, json: JsonObject): ResponseFormat | undefined {
  const format = r.object(json, "response_format", "response_format");
  if (!format) return undefined;
  const type = r.oneOf(format, "type", "response_format.type", ["text", "json_object", "json_schema"] as const);
  switch (type) {
    case undefined:
      return format.type === undefined ? r.fail("response_format.type", "'response_format.type' is required.") : undefined;
    case "text":
    case "json_object":
      return { type };
    case "json_schema": {
      const spec = r.object(format, "json_schema", "response_format.json_schema");
      if (!spec) return r.fail("response_format.json_schema", "'response_format.json_schema' is required.");
      const name = r.string(spec, "name", "response_format.json_schema.name", true);
      if (name === undefined) return undefined;
      const out: ResponseFormat = { type, name };
      const schema = r.object(spec, "schema", "response_format.json_schema.schema");
      const strict = r.boolean(spec, "strict", "response_format.json_schema.strict");
      const description = r.string(spec, "description", "response_format.json_schema.description");
      if (schema !== undefined) out.schema = schema;
      if (strict !== undefined) out.strict = strict;
      if (description !== undefined) out.description = description;
      return out;
    }
    default:
      return type satisfies never;
  }
}
