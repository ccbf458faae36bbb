/**
 * Anthropic Messages request (`POST /v1/messages`) → canonical `ChatRequest`, so an app built on
 * `@anthropic-ai/sdk` can be served by any backend. Every field read is validated and the first
 * bad one is named (`messages[1].content[0].source.data`), as the OpenAI parser does.
 *
 * Mapping decisions, where the two models differ:
 * - `system` (and `role: "system"` turns, which the SDK allows) become canonical system messages.
 * - Consecutive turns of one role are accepted (Anthropic merges them); alternation is not forced.
 * - A user turn's `tool_result` blocks become canonical tool messages placed before the rest of
 *   that turn (Anthropic requires them first; OpenAI-style backends need them right after the
 *   assistant's tool calls). Their content must be text; `is_error: true` prefixes it with
 *   `Error:` because the canonical tool message has no error flag.
 * - `thinking` blocks become the assistant's `reasoning` (signatures are dropped);
 *   `redacted_thinking` blocks are dropped: no other backend can read them.
 * - `document` blocks: base64 PDF → file part (a data URL, `title` as file name); plain-text and
 *   `content` sources → text/image parts; `file` source → file part by id (only a backend that
 *   knows the id can use it).
 * - `cache_control`, `citations` and document `context` have no canonical equivalent: dropped.
 * - What only Anthropic can run is not an error here but an *Anthropic-only* field, listed in
 *   `anthropicOnly` and left out of the canonical request: server tools (`web_search_…`,
 *   `code_execution_…`, memory, tool search…), blocks the canonical model has no room for
 *   (`server_tool_use`, `mcp_tool_use`, `*_tool_result`, `compaction`, `tool_reference` or images
 *   inside a `tool_result`, non-text blocks in a `system` turn), URL PDFs, image `file` sources,
 *   `mcp_servers`, `container`, `context_management`. The client's bytes reach an Anthropic backend
 *   unchanged; any other backend refuses the call with a 400 naming the first such field
 *   (`endpoints/anthropic-messages.ts`). `parseAnthropicMessagesRequest` is the strict form: it
 *   fails on the first of them.
 * - `top_k`, `thinking`, `service_tier` and other fields the canonical model lacks are validated
 *   where cheap and kept in `extra` under their Anthropic names.
 * - Structured output, `output_config.format` (or the beta's top-level `output_format`)
 *   `{type: "json_schema", schema}`, is the canonical `json_schema` response format (named
 *   `output`), so every backend gets it in its own form; `output_config` itself stays in `extra`.
 * - Anthropic always reports usage on streams, so a streaming request sets `includeUsage`.
 */
import type {
  AssistantMessage,
  ChatRequest,
  ContentPart,
  FunctionTool,
  ImagePart,
  Message,
  ResponseFormat,
  TextPart,
  ToolCall,
  ToolMessage,
} from "../canonical/types.ts";
import { unreachable } from "../errors.ts";
import { fail, ok, type Result } from "../result.ts";
import { extraFields, FieldReader, isObject, type FieldError, type JsonObject } from "./fields.ts";

/** A parsed Messages request and what in it only an Anthropic backend can serve. */
export interface AnthropicMessagesParse {
  request: ChatRequest;
  /** Fields the canonical model cannot carry, first one first; empty when any backend can serve it. */
  anthropicOnly: FieldError[];
}

/** A field reader that also records the fields only Anthropic can serve. */
class MessagesReader extends FieldReader {
  readonly anthropicOnly: FieldError[] = [];

  only(param: string, what: string): undefined {
    this.anthropicOnly.push({ param, message: `'${param}' ${what}` });
    return undefined;
  }
}

/** Top-level fields that configure Anthropic-run machinery no other backend has. */
const ANTHROPIC_ONLY_FIELDS = ["mcp_servers", "container", "context_management"] as const;

const KNOWN_FIELDS = new Set([
  "model",
  "max_tokens",
  "messages",
  "system",
  "stop_sequences",
  "temperature",
  "top_p",
  "stream",
  "tools",
  "tool_choice",
  "metadata",
  "output_format",
]);

const ROLES = ["user", "assistant", "system"] as const;
const USER_BLOCKS = ["text", "image", "document", "tool_result"] as const;
const ASSISTANT_BLOCKS = ["text", "tool_use", "thinking", "redacted_thinking"] as const;
const IMAGE_MEDIA_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp"] as const;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

/** Parses an Anthropic Messages request body (already JSON-decoded) into the canonical model; fails on Anthropic-only fields. */
export function parseAnthropicMessagesRequest(json: unknown): Result<ChatRequest, FieldError> {
  const parsed = parseAnthropicMessages(json);
  if (!parsed.ok) return parsed;
  const [first] = parsed.value.anthropicOnly;
  return first ? fail(first) : ok(parsed.value.request);
}

/** Parses a Messages request, keeping Anthropic-only fields aside instead of failing on them. */
export function parseAnthropicMessages(json: unknown): Result<AnthropicMessagesParse, FieldError> {
  const r = new MessagesReader();
  if (!isObject(json)) return fail({ param: "", message: "The request body must be a JSON object." });

  const model = r.string(json, "model", "model", true);
  if (model === "") r.fail("model", "'model' must not be empty.");
  const maxTokens = isAbsent(json.max_tokens)
    ? r.fail("max_tokens", "'max_tokens' is required.")
    : r.number(json, "max_tokens", "max_tokens", { min: 1, integer: true });
  const messages: Message[] = [];
  const system = readSystem(r, json);
  if (system) messages.push(system);
  const rawMessages = r.array(json, "messages", "messages", true);
  if (rawMessages && rawMessages.length === 0) r.fail("messages", "'messages' must contain at least one message.");
  rawMessages?.forEach((m, i) => readMessage(r, m, `messages[${i}]`, messages));

  const stream = r.boolean(json, "stream", "stream") ?? false;
  const request: ChatRequest = { model: model ?? "", messages, stream, extra: extraFields(json, KNOWN_FIELDS) };
  if (stream) request.includeUsage = true;
  assign(request, "maxTokens", maxTokens);
  assign(request, "temperature", r.number(json, "temperature", "temperature", { min: 0, max: 1 }));
  assign(request, "topP", r.number(json, "top_p", "top_p", { min: 0, max: 1 }));
  r.number(json, "top_k", "top_k", { min: 0, integer: true }); // validated only: it travels in `extra`
  assign(request, "stop", readStopSequences(r, json));
  const metadata = r.object(json, "metadata", "metadata");
  assign(request, "user", metadata && r.string(metadata, "user_id", "metadata.user_id"));
  assign(request, "tools", readTools(r, json));
  readToolChoice(r, json, request);
  assign(request, "responseFormat", readOutputFormat(r, json));
  for (const field of ANTHROPIC_ONLY_FIELDS) if (!isAbsent(json[field])) r.only(field, "configures machinery only Anthropic runs.");

  return r.errors.length > 0 ? fail(...r.errors) : ok({ request, anthropicOnly: r.anthropicOnly });
}

function assign<K extends keyof ChatRequest>(target: ChatRequest, key: K, value: ChatRequest[K] | undefined): void {
  if (value !== undefined) target[key] = value;
}

function isAbsent(value: unknown): value is null | undefined {
  return value === undefined || value === null;
}

/** `FieldReader.oneOf`, but a missing value is an error too. */
function requiredOneOf<T extends string>(r: MessagesReader, obj: JsonObject, key: string, path: string, allowed: readonly T[]): T | undefined {
  if (isAbsent(obj[key])) return r.fail(path, `'${path}' is required.`);
  return r.oneOf(obj, key, path, allowed);
}

/** A required string that must not be empty. */
function nonEmpty(r: MessagesReader, obj: JsonObject, key: string, path: string): string | undefined {
  const value = r.string(obj, key, path, true);
  return value === "" ? r.fail(path, `'${path}' must not be empty.`) : value;
}

function readSystem(r: MessagesReader, json: JsonObject): Message | undefined {
  const value = json.system;
  if (isAbsent(value) || value === "") return undefined;
  if (typeof value === "string") return { role: "system", content: value };
  if (!Array.isArray(value)) return r.fail("system", "'system' must be a string or an array of text blocks.");
  const parts = readTextBlocks(r, value, "system", "in 'system'");
  return parts.length > 0 ? { role: "system", content: parts } : undefined;
}

/** Blocks the canonical model carries only as text (system prompts, tool results); others are Anthropic-only. */
function readTextBlocks(r: MessagesReader, blocks: unknown[], path: string, where: string): TextPart[] {
  const parts: TextPart[] = [];
  blocks.forEach((block, i) => {
    const p = `${path}[${i}]`;
    if (!isObject(block)) return r.fail(p, `'${p}' must be an object.`);
    const type = r.string(block, "type", `${p}.type`, true);
    if (type === undefined) return undefined;
    if (type !== "text") return r.only(`${p}.type`, `'${type}': only an Anthropic backend takes anything but 'text' ${where}.`);
    const text = r.string(block, "text", `${p}.text`, true);
    if (text !== undefined) parts.push({ type: "text", text });
  });
  return parts;
}

/** One Anthropic turn → one or more canonical messages (a user turn may carry tool results). */
function readMessage(r: MessagesReader, raw: unknown, path: string, out: Message[]): void {
  if (!isObject(raw)) {
    r.fail(path, `'${path}' must be an object.`);
    return;
  }
  const role = requiredOneOf(r, raw, "role", `${path}.role`, ROLES);
  const content = raw.content;
  const cpath = `${path}.content`;
  if (role === undefined) return;
  if (!Array.isArray(content)) {
    if (typeof content === "string") out.push({ role, content });
    else r.fail(cpath, isAbsent(content) ? `'${cpath}' is required.` : `'${cpath}' must be a string or an array of content blocks.`);
    return;
  }
  if (content.length === 0 && role !== "assistant") {
    r.fail(cpath, `'${cpath}' must contain at least one content block.`);
    return;
  }
  switch (role) {
    case "system":
      out.push({ role: "system", content: readTextBlocks(r, content, cpath, "in a system message") });
      return;
    case "user":
      return readUserBlocks(r, content, cpath, out);
    case "assistant":
      return readAssistantBlocks(r, content, cpath, out);
    default:
      return unreachable(role, "message role");
  }
}

/** The block's `type`, or a failure saying why this role cannot carry it. */
function blockType<T extends string>(r: MessagesReader, block: JsonObject, p: string, allowed: readonly T[], role: "user" | "assistant"): T | undefined {
  const type = r.string(block, "type", `${p}.type`, true);
  if (type === undefined) return undefined;
  if ((allowed as readonly string[]).includes(type)) return type as T;
  const other: readonly string[] = role === "user" ? ASSISTANT_BLOCKS : USER_BLOCKS;
  if (!other.includes(type)) return r.only(`${p}.type`, `'${type}' is a block only an Anthropic backend reads.`);
  return r.fail(`${p}.type`, `'${p}.type' '${type}' is not allowed in ${role} messages; expected one of ${allowed.map((a) => `'${a}'`).join(", ")}.`);
}

function readUserBlocks(r: MessagesReader, blocks: unknown[], path: string, out: Message[]): void {
  const results: ToolMessage[] = [];
  const parts: ContentPart[] = [];
  blocks.forEach((block, i) => {
    const p = `${path}[${i}]`;
    if (!isObject(block)) return r.fail(p, `'${p}' must be an object.`);
    const type = blockType(r, block, p, USER_BLOCKS, "user");
    switch (type) {
      case undefined:
        return undefined;
      case "text": {
        const text = r.string(block, "text", `${p}.text`, true);
        if (text !== undefined) parts.push({ type: "text", text });
        return undefined;
      }
      case "image": {
        const image = readImage(r, block, p);
        if (image) parts.push(image);
        return undefined;
      }
      case "document":
        parts.push(...readDocument(r, block, p));
        return undefined;
      case "tool_result": {
        const result = readToolResult(r, block, p);
        if (result) results.push(result);
        return undefined;
      }
      default:
        return unreachable(type, "user content block");
    }
  });
  out.push(...results);
  if (parts.length > 0) out.push({ role: "user", content: parts });
}

function readAssistantBlocks(r: MessagesReader, blocks: unknown[], path: string, out: Message[]): void {
  const parts: TextPart[] = [];
  const toolCalls: ToolCall[] = [];
  const reasoning: string[] = [];
  blocks.forEach((block, i) => {
    const p = `${path}[${i}]`;
    if (!isObject(block)) return r.fail(p, `'${p}' must be an object.`);
    const type = blockType(r, block, p, ASSISTANT_BLOCKS, "assistant");
    switch (type) {
      case undefined:
      case "redacted_thinking": // encrypted for Anthropic only: no other backend can use it
        return undefined;
      case "text": {
        const text = r.string(block, "text", `${p}.text`, true);
        if (text !== undefined) parts.push({ type: "text", text });
        return undefined;
      }
      case "thinking": {
        const thinking = r.string(block, "thinking", `${p}.thinking`, true);
        if (thinking !== undefined) reasoning.push(thinking);
        return undefined;
      }
      case "tool_use": {
        const id = nonEmpty(r, block, "id", `${p}.id`);
        const name = nonEmpty(r, block, "name", `${p}.name`);
        const input = isAbsent(block.input) ? r.fail(`${p}.input`, `'${p}.input' is required.`) : r.object(block, "input", `${p}.input`);
        if (id !== undefined && name !== undefined && input !== undefined) toolCalls.push({ id, name, arguments: JSON.stringify(input) });
        return undefined;
      }
      default:
        return unreachable(type, "assistant content block");
    }
  });
  const message: AssistantMessage = { role: "assistant", content: parts.length > 0 ? parts : toolCalls.length > 0 ? null : "" };
  if (toolCalls.length > 0) message.toolCalls = toolCalls;
  if (reasoning.length > 0) message.reasoning = reasoning.join("\n");
  out.push(message);
}

function readImage(r: MessagesReader, block: JsonObject, p: string): ImagePart | undefined {
  const sp = `${p}.source`;
  const source = isAbsent(block.source) ? r.fail(sp, `'${sp}' is required.`) : r.object(block, "source", sp);
  if (!source) return undefined;
  const type = requiredOneOf(r, source, "type", `${sp}.type`, ["base64", "url", "file"] as const);
  switch (type) {
    case undefined:
      return undefined;
    case "base64": {
      const mediaType = requiredOneOf(r, source, "media_type", `${sp}.media_type`, IMAGE_MEDIA_TYPES);
      const data = nonEmpty(r, source, "data", `${sp}.data`);
      return mediaType === undefined || data === undefined ? undefined : { type: "image", mediaType, data };
    }
    case "url": {
      const url = nonEmpty(r, source, "url", `${sp}.url`);
      return url === undefined ? undefined : { type: "image", url };
    }
    case "file":
      return r.only(`${sp}.type`, "'file': only Anthropic can read its Files API ids for images; send 'base64' or 'url' for other backends.");
    default:
      return unreachable(type, "image source");
  }
}

function readDocument(r: MessagesReader, block: JsonObject, p: string): ContentPart[] {
  const sp = `${p}.source`;
  const source = isAbsent(block.source) ? r.fail(sp, `'${sp}' is required.`) : r.object(block, "source", sp);
  if (!source) return [];
  const title = r.string(block, "title", `${p}.title`);
  const type = requiredOneOf(r, source, "type", `${sp}.type`, ["base64", "text", "content", "url", "file"] as const);
  switch (type) {
    case undefined:
      return [];
    case "base64": {
      const mediaType = requiredOneOf(r, source, "media_type", `${sp}.media_type`, ["application/pdf"] as const);
      const data = nonEmpty(r, source, "data", `${sp}.data`);
      if (mediaType === undefined || data === undefined) return [];
      return [{ type: "file", filename: title || "document.pdf", data: `data:${mediaType};base64,${data}` }];
    }
    case "text": {
      r.oneOf(source, "media_type", `${sp}.media_type`, ["text/plain"] as const);
      const data = r.string(source, "data", `${sp}.data`, true);
      return data === undefined ? [] : [{ type: "text", text: data }];
    }
    case "content":
      return readDocumentContent(r, source, `${sp}.content`);
    case "file": {
      const fileId = nonEmpty(r, source, "file_id", `${sp}.file_id`);
      return fileId === undefined ? [] : [{ type: "file", fileId }];
    }
    case "url":
      r.only(`${sp}.type`, "'url': only Anthropic fetches PDFs by URL; send 'base64' for other backends.");
      return [];
    default:
      return unreachable(type, "document source");
  }
}

/** A `content` document source: a string, or text and image blocks. */
function readDocumentContent(r: MessagesReader, source: JsonObject, path: string): ContentPart[] {
  const value = source.content;
  if (typeof value === "string") return [{ type: "text", text: value }];
  if (!Array.isArray(value)) {
    r.fail(path, `'${path}' must be a string or an array of text and image blocks.`);
    return [];
  }
  const parts: ContentPart[] = [];
  value.forEach((block, i) => {
    const p = `${path}[${i}]`;
    if (!isObject(block)) return r.fail(p, `'${p}' must be an object.`);
    const type = requiredOneOf(r, block, "type", `${p}.type`, ["text", "image"] as const);
    if (type === "text") {
      const text = r.string(block, "text", `${p}.text`, true);
      if (text !== undefined) parts.push({ type: "text", text });
    } else if (type === "image") {
      const image = readImage(r, block, p);
      if (image) parts.push(image);
    }
  });
  return parts;
}

function readToolResult(r: MessagesReader, block: JsonObject, p: string): ToolMessage | undefined {
  const toolCallId = nonEmpty(r, block, "tool_use_id", `${p}.tool_use_id`);
  const isError = r.boolean(block, "is_error", `${p}.is_error`) === true;
  const value = block.content;
  const cpath = `${p}.content`;
  let content: string | TextPart[] | undefined;
  if (isAbsent(value)) content = "";
  else if (typeof value === "string") content = value;
  else if (Array.isArray(value)) content = readTextBlocks(r, value, cpath, "in a tool result (Gearbox carries only text results)");
  else content = r.fail(cpath, `'${cpath}' must be a string or an array of text blocks.`);
  if (toolCallId === undefined || content === undefined) return undefined;
  if (isError) content = typeof content === "string" ? `Error: ${content}` : [{ type: "text", text: "Error:" }, ...content];
  return { role: "tool", toolCallId, content };
}

function readStopSequences(r: MessagesReader, json: JsonObject): string[] | undefined {
  const list = r.array(json, "stop_sequences", "stop_sequences");
  if (!list) return undefined;
  const stops: string[] = [];
  list.forEach((s, i) => {
    if (typeof s === "string") stops.push(s);
    else r.fail(`stop_sequences[${i}]`, `'stop_sequences[${i}]' must be a string.`);
  });
  return stops.length > 0 ? stops : undefined; // `[]` means none; some backends reject an empty `stop`
}

function readTools(r: MessagesReader, json: JsonObject): FunctionTool[] | undefined {
  const list = r.array(json, "tools", "tools");
  if (!list) return undefined;
  const tools: FunctionTool[] = [];
  list.forEach((item, i) => {
    const p = `tools[${i}]`;
    if (!isObject(item)) return r.fail(p, `'${p}' must be an object.`);
    const type = r.string(item, "type", `${p}.type`);
    if (type !== undefined && type !== "custom") return r.only(`${p}.type`, `'${type}' is an Anthropic server tool: only an Anthropic backend runs it.`);
    const name = r.string(item, "name", `${p}.name`, true);
    if (name !== undefined && !TOOL_NAME.test(name)) {
      r.fail(`${p}.name`, `'${p}.name' must be 1-128 characters of a-z, A-Z, 0-9, _ or -.`);
    }
    const schema = isAbsent(item.input_schema)
      ? r.fail(`${p}.input_schema`, `'${p}.input_schema' is required.`)
      : r.object(item, "input_schema", `${p}.input_schema`);
    const description = r.string(item, "description", `${p}.description`);
    const strict = r.boolean(item, "strict", `${p}.strict`);
    if (name === undefined || schema === undefined) return undefined;
    const tool: FunctionTool = { type: "function", name, parameters: schema };
    if (description !== undefined) tool.description = description;
    if (strict !== undefined) tool.strict = strict;
    tools.push(tool);
  });
  return tools;
}

/** `tool_choice` → canonical choice; `disable_parallel_tool_use: true` → `parallelToolCalls: false`. */
function readToolChoice(r: MessagesReader, json: JsonObject, request: ChatRequest): void {
  const choice = r.object(json, "tool_choice", "tool_choice");
  if (!choice) return;
  const type = requiredOneOf(r, choice, "type", "tool_choice.type", ["auto", "any", "tool", "none"] as const);
  if (r.boolean(choice, "disable_parallel_tool_use", "tool_choice.disable_parallel_tool_use") === true) request.parallelToolCalls = false;
  switch (type) {
    case undefined:
      return;
    case "auto":
    case "none":
      request.toolChoice = { type };
      return;
    case "any":
      request.toolChoice = { type: "required" };
      return;
    case "tool": {
      const name = nonEmpty(r, choice, "name", "tool_choice.name");
      if (name !== undefined) request.toolChoice = { type: "function", name };
      return;
    }
    default:
      return unreachable(type, "tool choice");
  }
}

/** `output_config.format` (or the beta's `output_format`) → the canonical JSON-schema response format. */
function readOutputFormat(r: MessagesReader, json: JsonObject): ResponseFormat | undefined {
  const config = r.object(json, "output_config", "output_config");
  const inConfig = config !== undefined && !isAbsent(config.format);
  const path = inConfig ? "output_config.format" : "output_format";
  const format = inConfig ? r.object(config, "format", path) : r.object(json, "output_format", path);
  if (!format) return undefined;
  const type = requiredOneOf(r, format, "type", `${path}.type`, ["json_schema"] as const);
  const schema = isAbsent(format.schema) ? r.fail(`${path}.schema`, `'${path}.schema' is required.`) : r.object(format, "schema", `${path}.schema`);
  if (type === undefined || schema === undefined) return undefined;
  return { type: "json_schema", name: "output", schema, strict: true };
}
