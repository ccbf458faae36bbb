/**
 * OpenAI Responses API request (`POST /v1/responses`) → canonical `ChatRequest`, so a Responses
 * call gets routing, limits, cache and cost like a chat completion, on every backend.
 *
 * - `instructions` → a leading system message; `input` (a string, or items) → messages:
 *   `message` items (`type` may be omitted) with `input_text` / `input_image` / `input_file` /
 *   `output_text` / `refusal` parts; `function_call` items → the assistant's tool calls (calls
 *   in a row join one assistant message, as Chat Completions has them); `function_call_output`
 *   → tool messages; `reasoning` items → the next assistant message's reasoning (their
 *   `encrypted_content` is OpenAI's own and is not sent elsewhere).
 * - `max_output_tokens`, `temperature`, `top_p`, `top_logprobs`, `user`, `metadata`,
 *   `parallel_tool_calls` as in chat; `reasoning.effort` → `reasoning_effort`; `text.format` →
 *   the response format; function `tools` (flat: `{type, name, description, parameters, strict}`)
 *   and `tool_choice` (`auto`, `none`, `required`, `{type: "function", name}`,
 *   `{type: "allowed_tools", mode, tools}`).
 * - Refused with a 400 naming the field, because no backend Gearbox routes to can run them once
 *   the call is translated: built-in tools (`web_search`, `file_search`, `code_interpreter`,
 *   `computer_use_preview`, `mcp`, `image_generation`, …), `item_reference` items, file ids
 *   (OpenAI's Files API), `background: true`, `conversation` and `prompt` (server-side state).
 * - `previous_response_id` is returned beside the request: the endpoint resolves it from the
 *   response store. `store`, `include`, `truncation`, `service_tier`, `prompt_cache_key`,
 *   `safety_identifier` and other fields are kept in `extra` (they change nothing a backend does).
 */
import type { ChatRequest, ContentPart, FunctionTool, Message, ResponseFormat, TextPart, ToolCall, ToolChoice } from "../canonical/types.ts";
import { fail, ok, type Result } from "../result.ts";
import { extraFields, FieldReader, isObject, type FieldError, type JsonObject } from "./fields.ts";

export interface ResponsesCall {
  request: ChatRequest;
  previousResponseId?: string;
  /** `store` (default true): whether the response may be stored for a later `previous_response_id`. */
  store: boolean;
}

const KNOWN_FIELDS: ReadonlySet<string> = new Set([
  "model",
  "input",
  "instructions",
  "stream",
  "max_output_tokens",
  "temperature",
  "top_p",
  "top_logprobs",
  "user",
  "metadata",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "text",
  "reasoning",
  "previous_response_id",
  "store",
  "background",
  "conversation",
  "prompt",
  "stream_options",
]);

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;
const REFUSED_TOP_LEVEL: Readonly<Record<string, string>> = {
  conversation: "OpenAI's server-side conversations are not available through Gearbox; send the history as 'input' items or use 'previous_response_id'.",
  prompt: "OpenAI's stored prompt templates are not available through Gearbox; send the prompt as 'instructions' and 'input'.",
};

/** Parses a Responses request body; the first bad field is a `FieldError` naming it. */
export function parseResponsesRequest(json: unknown): Result<ResponsesCall, FieldError> {
  const r = new FieldReader();
  if (!isObject(json)) return fail({ param: "", message: "The request body must be a JSON object." });
  const model = r.string(json, "model", "model", true);
  if (model === "") r.fail("model", "'model' must not be empty.");
  for (const [key, why] of Object.entries(REFUSED_TOP_LEVEL)) if (json[key] !== undefined && json[key] !== null) r.fail(key, `'${key}': ${why}`);
  if (r.boolean(json, "background", "background") === true)
    r.fail("background", "'background': background responses are not available through Gearbox; use 'stream' instead.");

  const messages: Message[] = [];
  const instructions = r.string(json, "instructions", "instructions");
  if (instructions !== undefined && instructions !== "") messages.push({ role: "system", content: instructions });
  const input = json.input;
  if (input === undefined || input === null) r.fail("input", "'input' is required.");
  else if (typeof input === "string") messages.push({ role: "user", content: input });
  else if (Array.isArray(input)) readItems(r, input, messages);
  else r.fail("input", "'input' must be a string or an array of items.");

  const request: ChatRequest = { model: model ?? "", messages, stream: r.boolean(json, "stream", "stream") ?? false, extra: extraFields(json, KNOWN_FIELDS) };
  const streamOptions = r.object(json, "stream_options", "stream_options");
  if (streamOptions && request.stream !== true) r.fail("stream_options", "'stream_options' is only allowed when 'stream' is true.");
  const set = <K extends keyof ChatRequest>(key: K, value: ChatRequest[K] | undefined): void => {
    if (value !== undefined) request[key] = value;
  };
  set("maxTokens", r.number(json, "max_output_tokens", "max_output_tokens", { min: 1, integer: true }));
  set("temperature", r.number(json, "temperature", "temperature", { min: 0, max: 2 }));
  set("topP", r.number(json, "top_p", "top_p", { min: 0, max: 1 }));
  const topLogprobs = r.number(json, "top_logprobs", "top_logprobs", { min: 0, max: 20, integer: true });
  if (topLogprobs !== undefined && topLogprobs > 0) {
    request.logprobs = true;
    request.topLogprobs = topLogprobs;
  }
  set("user", r.string(json, "user", "user"));
  set("metadata", r.stringMap(json, "metadata", "metadata"));
  set("tools", readTools(r, json));
  set("toolChoice", readToolChoice(r, json));
  set("parallelToolCalls", r.boolean(json, "parallel_tool_calls", "parallel_tool_calls"));
  set("responseFormat", readFormat(r, json));
  const reasoning = r.object(json, "reasoning", "reasoning");
  if (reasoning) set("reasoningEffort", r.string(reasoning, "effort", "reasoning.effort"));
  // The Responses API always reports usage; OpenAI refuses `stream_options` on a request that does not stream.
  if (request.stream) request.includeUsage = true;

  const previousResponseId = r.string(json, "previous_response_id", "previous_response_id");
  if (previousResponseId === "") r.fail("previous_response_id", "'previous_response_id' must not be empty.");
  const store = r.boolean(json, "store", "store") ?? true;
  if (messages.every((m) => m.role === "system" || m.role === "developer") && previousResponseId === undefined && r.errors.length === 0) {
    r.fail("input", "'input' must hold at least one message or item besides instructions.");
  }
  if (r.errors.length > 0) return fail(...r.errors);
  const call: ResponsesCall = { request, store };
  if (previousResponseId !== undefined) call.previousResponseId = previousResponseId;
  return ok(call);
}

function readItems(r: FieldReader, items: unknown[], out: Message[]): void {
  let reasoning: string[] = [];
  items.forEach((item, i) => {
    const p = `input[${i}]`;
    if (!isObject(item)) return r.fail(p, `'${p}' must be an object.`);
    const type = item.type ?? "message";
    switch (type) {
      case "message": {
        const message = readMessage(r, item, p);
        if (!message) return;
        if (message.role === "assistant" && reasoning.length > 0) {
          message.reasoning = reasoning.join("\n");
          reasoning = [];
        }
        return void out.push(message);
      }
      case "function_call": {
        const callId = r.string(item, "call_id", `${p}.call_id`, true);
        const name = r.string(item, "name", `${p}.name`, true);
        const args = r.string(item, "arguments", `${p}.arguments`, true);
        if (callId === undefined || name === undefined || args === undefined) return;
        const call: ToolCall = { id: callId, name, arguments: args };
        const last = out.at(-1);
        if (last?.role === "assistant" && reasoning.length === 0) {
          // Calls right after the assistant's text (or another call) belong to that message.
          last.toolCalls = [...(last.toolCalls ?? []), call];
          return;
        }
        const message: Message = { role: "assistant", content: null, toolCalls: [call] };
        if (reasoning.length > 0) {
          message.reasoning = reasoning.join("\n");
          reasoning = [];
        }
        return void out.push(message);
      }
      case "function_call_output": {
        const callId = r.string(item, "call_id", `${p}.call_id`, true);
        const output = item.output;
        let content: string | TextPart[] | undefined;
        if (typeof output === "string") content = output;
        else if (Array.isArray(output)) content = output.flatMap((part, j) => textOf(r, part, `${p}.output[${j}]`));
        else r.fail(`${p}.output`, `'${p}.output' must be a string or an array of parts.`);
        if (callId === undefined || content === undefined) return;
        return void out.push({ role: "tool", toolCallId: callId, content });
      }
      case "reasoning": {
        const summary = r.array(item, "summary", `${p}.summary`) ?? [];
        summary.forEach((s, j) => {
          if (isObject(s) && typeof s.text === "string") reasoning.push(s.text);
          else r.fail(`${p}.summary[${j}]`, `'${p}.summary[${j}]' must be a summary_text part.`);
        });
        return;
      }
      case "item_reference":
        return r.fail(`${p}.type`, `'${p}.type': 'item_reference' points into OpenAI's server-side storage, which Gearbox cannot read; send the item itself.`);
      default:
        return r.fail(
          `${p}.type`,
          `'${p}.type' (${JSON.stringify(type)}) is not an input item Gearbox can translate (message, function_call, function_call_output, reasoning).`,
        );
    }
  });
}

const ROLES = ["user", "system", "developer", "assistant"] as const;

function readMessage(r: FieldReader, item: JsonObject, p: string): Message | undefined {
  const role = r.oneOf(item, "role", `${p}.role`, ROLES);
  if (role === undefined) return item.role === undefined ? r.fail(`${p}.role`, `'${p}.role' is required.`) : undefined;
  const content = item.content;
  if (typeof content === "string") return { role, content };
  if (!Array.isArray(content)) return r.fail(`${p}.content`, `'${p}.content' must be a string or an array of parts.`);
  if (role === "user") {
    const parts = content.map((part, j) => readUserPart(r, part, `${p}.content[${j}]`)).filter((x): x is ContentPart => x !== undefined);
    return { role, content: parts };
  }
  const texts: TextPart[] = [];
  let refusal: string | undefined;
  content.forEach((part, j) => {
    const q = `${p}.content[${j}]`;
    if (role === "assistant" && isObject(part) && part.type === "refusal") {
      refusal = r.string(part, "refusal", `${q}.refusal`, true);
      return;
    }
    texts.push(...textOf(r, part, q));
  });
  if (role === "assistant") {
    const message: Message = { role, content: texts };
    if (refusal !== undefined) message.refusal = refusal;
    return message;
  }
  return { role, content: texts };
}

/** A text part (`input_text`, `output_text`, `text`). */
function textOf(r: FieldReader, part: unknown, p: string): TextPart[] {
  if (!isObject(part)) return r.fail(p, `'${p}' must be an object.`) ?? [];
  if (part.type !== "input_text" && part.type !== "output_text" && part.type !== "text") {
    return r.fail(`${p}.type`, `'${p}.type' must be 'input_text' or 'output_text' here, got '${String(part.type)}'.`) ?? [];
  }
  const text = r.string(part, "text", `${p}.text`, true);
  return text === undefined ? [] : [{ type: "text", text }];
}

function readUserPart(r: FieldReader, part: unknown, p: string): ContentPart | undefined {
  if (!isObject(part)) return r.fail(p, `'${p}' must be an object.`);
  switch (part.type) {
    case "input_text":
    case "output_text":
    case "text":
      return textOf(r, part, p)[0];
    case "input_image": {
      if (part.file_id !== undefined && part.file_id !== null)
        return r.fail(`${p}.file_id`, `'${p}.file_id': OpenAI file ids mean nothing to other providers; send 'image_url' (a URL or a data: URL).`);
      const url = r.string(part, "image_url", `${p}.image_url`, true);
      const detail = r.oneOf(part, "detail", `${p}.detail`, ["auto", "low", "high"] as const);
      if (url === undefined) return undefined;
      const match = DATA_URL.exec(url);
      const out: ContentPart = match ? { type: "image", mediaType: match[1] ?? "", data: match[2] ?? "" } : { type: "image", url };
      if (detail !== undefined) out.detail = detail;
      return out;
    }
    case "input_file": {
      if (part.file_id !== undefined && part.file_id !== null)
        return r.fail(`${p}.file_id`, `'${p}.file_id': OpenAI file ids mean nothing to other providers; send 'file_data'.`);
      const data = r.string(part, "file_data", `${p}.file_data`, true);
      const filename = r.string(part, "filename", `${p}.filename`);
      if (data === undefined) return undefined;
      const out: ContentPart = { type: "file", data };
      if (filename !== undefined) out.filename = filename;
      return out;
    }
    default:
      return r.fail(`${p}.type`, `'${p}.type' ('${String(part.type)}') is not a content part Gearbox can translate (input_text, input_image, input_file).`);
  }
}

function readTools(r: FieldReader, json: JsonObject): FunctionTool[] | undefined {
  const list = r.array(json, "tools", "tools");
  if (!list) return undefined;
  const tools: FunctionTool[] = [];
  list.forEach((raw, i) => {
    const p = `tools[${i}]`;
    if (!isObject(raw)) return r.fail(p, `'${p}' must be an object.`);
    if (raw.type !== "function") {
      return r.fail(
        `${p}.type`,
        `'${p}.type' ('${String(raw.type)}') is one of OpenAI's built-in tools, which only OpenAI runs; Gearbox translates function tools only.`,
      );
    }
    const name = r.string(raw, "name", `${p}.name`, true);
    const description = r.string(raw, "description", `${p}.description`);
    const parameters = r.object(raw, "parameters", `${p}.parameters`);
    const strict = r.boolean(raw, "strict", `${p}.strict`);
    if (name === undefined) return;
    const tool: FunctionTool = { type: "function", name };
    if (description !== undefined) tool.description = description;
    if (parameters !== undefined) tool.parameters = parameters;
    if (strict !== undefined) tool.strict = strict;
    tools.push(tool);
  });
  return tools;
}

function readToolChoice(r: FieldReader, json: JsonObject): ToolChoice | undefined {
  const raw = json.tool_choice;
  if (raw === undefined || raw === null) return undefined;
  if (raw === "auto" || raw === "none" || raw === "required") return { type: raw };
  if (!isObject(raw)) return r.fail("tool_choice", "'tool_choice' must be 'auto', 'none', 'required' or an object.");
  if (raw.type === "function") {
    const name = r.string(raw, "name", "tool_choice.name", true);
    return name === undefined ? undefined : { type: "function", name };
  }
  if (raw.type === "allowed_tools") {
    const mode = r.oneOf(raw, "mode", "tool_choice.mode", ["auto", "required"] as const) ?? "auto";
    const list = r.array(raw, "tools", "tool_choice.tools", true) ?? [];
    const names = list.map((t, i) =>
      isObject(t) && typeof t.name === "string" ? t.name : r.fail(`tool_choice.tools[${i}]`, `'tool_choice.tools[${i}]' must be a function tool with a name.`),
    );
    return names.every((n): n is string => n !== undefined) ? { type: "allowed", mode, names } : undefined;
  }
  return r.fail(
    "tool_choice.type",
    `'tool_choice.type' ('${String(raw.type)}') names a built-in tool, which only OpenAI runs; use 'function' or 'allowed_tools'.`,
  );
}

function readFormat(r: FieldReader, json: JsonObject): ResponseFormat | undefined {
  const text = r.object(json, "text", "text");
  const format = text && r.object(text, "format", "text.format");
  if (!format) return undefined;
  const type = r.oneOf(format, "type", "text.format.type", ["text", "json_object", "json_schema"] as const);
  if (type !== "json_schema") return type === undefined ? undefined : { type };
  const name = r.string(format, "name", "text.format.name", true);
  const schema = r.object(format, "schema", "text.format.schema");
  const strict = r.boolean(format, "strict", "text.format.strict");
  const description = r.string(format, "description", "text.format.description");
  if (name === undefined) return undefined;
  const out: ResponseFormat = { type: "json_schema", name };
  if (schema !== undefined) out.schema = schema;
  if (strict !== undefined) out.strict = strict;
  if (description !== undefined) out.description = description;
  return out;
}
