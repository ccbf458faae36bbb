/**
 * Canonical chat request → the body of Ollama's native `POST /api/chat` (docs/api.md in
 * ollama/ollama). Ollama takes images as base64 bytes on the message, tool-call arguments as
 * JSON objects, tool results with the tool's name, sampling parameters under `options`, and
 * streams unless told otherwise. What it cannot do (image links, audio, files, forced tool
 * calls, several choices, logit bias) is a 400 naming the field, never a silent drop.
 */
import { offeredTools } from "../../../common/canonical/tools.ts";
import type { ChatRequest, ContentPart, FunctionTool, ImagePart, Message, ResponseFormat, TextPart } from "../../../common/canonical/types.ts";
import { invalidRequest, unreachable } from "../../../common/errors.ts";
import { isObject, type JsonObject } from "../../../common/schemas/fields.ts";

/** A tool call in a message, as Ollama writes and reads it (arguments are an object). */
export interface OllamaToolCall {
  /** Newer servers send and accept an id; older ones ignore it. */
  id?: string;
  function: { name: string; arguments: JsonObject };
}

/** One message of `/api/chat` (`api.Message` in Ollama's Go API). */
export interface OllamaMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  /** Base64 image bytes, no `data:` prefix. */
  images?: string[];
  thinking?: string;
  tool_calls?: OllamaToolCall[];
  /** On a tool result: the name of the tool that produced it. */
  tool_name?: string;
  tool_call_id?: string;
}

/** A tool definition: OpenAI's function shape, `parameters` required. */
export interface OllamaTool {
  type: "function";
  function: { name: string; description?: string; parameters: JsonObject };
}

/** The `/api/chat` request body Gearbox sends. */
export interface OllamaChatRequest {
  model: string;
  messages: OllamaMessage[];
  /** Always explicit: Ollama streams when it is absent. */
  stream: boolean;
  tools?: OllamaTool[];
  /** `"json"` (JSON mode) or a JSON Schema (structured outputs). */
  format?: "json" | JsonObject;
  options?: JsonObject;
  /** A boolean or a level (`"low"`, `"medium"`, `"high"`, `"max"`). */
  think?: unknown;
  keep_alive?: unknown;
  logprobs?: boolean;
  top_logprobs?: number;
}

const DATA_URL = /^data:[^,]*;base64,(.*)$/s;
const EMPTY_SCHEMA: JsonObject = { type: "object", properties: {} };

/**
 * Builds the body; throws a 400 `GatewayError` naming the field Ollama cannot serve. Ollama's own
 * fields in the client's `extra` are passed on: `keep_alive`, `think` (unless `reasoning_effort`
 * is set), and `options` (e.g. `num_ctx`), under the canonical parameters' values. Other extras
 * are OpenAI-only and dropped.
 */
export function toOllamaChatRequest(req: ChatRequest, model: string): OllamaChatRequest {
  if (req.n !== undefined && req.n > 1) throw invalidRequest("Ollama returns one choice per request: 'n' must be 1.", "n", "unsupported_parameter");
  if (req.logitBias !== undefined && Object.keys(req.logitBias).length > 0) {
    throw invalidRequest("Ollama does not support 'logit_bias'.", "logit_bias", "unsupported_parameter");
  }
  const out: OllamaChatRequest = { model, messages: toOllamaMessages(req.messages), stream: req.stream };
  const tools = toolsFor(req);
  if (tools) out.tools = tools;
  const format = formatFor(req.responseFormat);
  if (format !== undefined) out.format = format;
  const options = optionsFor(req);
  if (Object.keys(options).length > 0) out.options = options;
  const think = req.reasoningEffort !== undefined ? thinkFromReasoningEffort(req.reasoningEffort) : req.extra.think;
  if (think !== undefined) out.think = think;
  if (req.extra.keep_alive !== undefined) out.keep_alive = req.extra.keep_alive;
  if (req.logprobs !== undefined) out.logprobs = req.logprobs;
  if (req.topLogprobs !== undefined) out.top_logprobs = req.topLogprobs;
  return out;
}

/** Canonical messages → Ollama's; a tool result gets the name of the call it answers. */
export function toOllamaMessages(messages: readonly Message[]): OllamaMessage[] {
  const toolNames = new Map<string, string>();
  return messages.map((m, i): OllamaMessage => {
    switch (m.role) {
      case "system":
      case "developer":
        return { role: "system", content: joinText(m.content) };
      case "user":
        return userMessage(m.content, i);
      case "assistant": {
        const out: OllamaMessage = { role: "assistant", content: m.content !== null ? joinText(m.content) : (m.refusal ?? "") };
        if (m.reasoning) out.thinking = m.reasoning;
        if (m.toolCalls && m.toolCalls.length > 0) {
          out.tool_calls = m.toolCalls.map((call, k) => {
            toolNames.set(call.id, call.name);
            const args = parseArguments(call.arguments, `messages[${i}].tool_calls[${k}].function.arguments`);
            return { ...(call.id !== "" && { id: call.id }), function: { name: call.name, arguments: args } };
          });
        }
        return out;
      }
      case "tool": {
        const out: OllamaMessage = { role: "tool", content: joinText(m.content) };
        const name = toolNames.get(m.toolCallId);
        if (name !== undefined) out.tool_name = name;
        if (m.toolCallId !== "") out.tool_call_id = m.toolCallId;
        return out;
      }
      default:
        return unreachable(m, "message role");
    }
  });
}

/** Text parts become one string, one part per line (Ollama's `content` is a string). */
function joinText(content: string | TextPart[]): string {
  return typeof content === "string" ? content : content.map((p) => p.text).join("\n");
}

function userMessage(content: string | ContentPart[], i: number): OllamaMessage {
  if (typeof content === "string") return { role: "user", content };
  const texts: string[] = [];
  const images: string[] = [];
  content.forEach((part, j) => {
    const param = `messages[${i}].content[${j}]`;
    switch (part.type) {
      case "text":
        texts.push(part.text);
        break;
      case "image":
        images.push(imageBytes(part, param));
        break;
      case "audio":
        throw invalidRequest(`Ollama's chat API does not accept audio input (${param}).`, param, "unsupported_content");
      case "file":
        throw invalidRequest(`Ollama's chat API does not accept file input (${param}).`, param, "unsupported_content");
      default:
        unreachable(part, "content part");
    }
  });
  const out: OllamaMessage = { role: "user", content: texts.join("\n") };
  if (images.length > 0) out.images = images;
  return out;
}

/** Base64 bytes of an image part; Ollama cannot fetch links, so a URL is the client's error. */
function imageBytes(part: ImagePart, param: string): string {
  if (part.data) return part.data;
  const url = part.url ?? "";
  const inline = DATA_URL.exec(url);
  if (inline?.[1]) return inline[1];
  if (url === "") throw invalidRequest(`The image at ${param} has no data.`, param);
  throw invalidRequest(
    `Ollama needs image bytes and cannot fetch image URLs: send the image at ${param} inline as base64 (a data: URL).`,
    param,
    "image_url_not_supported",
  );
}

/** OpenAI-style JSON text → the object Ollama wants; empty text is `{}`, anything else must be an object. */
function parseArguments(text: string, param: string): JsonObject {
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidRequest(`The tool-call arguments at ${param} are not valid JSON; Ollama needs them as a JSON object.`, param, "invalid_tool_arguments");
  }
  if (!isObject(value)) throw invalidRequest(`The tool-call arguments at ${param} must be a JSON object.`, param, "invalid_tool_arguments");
  return value;
}

function toOllamaTool(tool: FunctionTool): OllamaTool {
  return {
    type: "function",
    function: {
      name: tool.name,
      ...(tool.description !== undefined && { description: tool.description }),
      parameters: tool.parameters ?? EMPTY_SCHEMA,
    },
  };
}

/** Ollama has no `tool_choice`: `none` withholds the tools, and a forced call cannot be honoured. */
function toolsFor(req: ChatRequest): OllamaTool[] | undefined {
  if (!req.tools || req.tools.length === 0) return undefined;
  const choice = req.toolChoice ?? { type: "auto" };
  switch (choice.type) {
    case "auto":
      return req.tools.map(toOllamaTool);
    case "allowed":
      if (choice.mode === "auto") return (offeredTools(req) ?? []).map(toOllamaTool);
      throw invalidRequest(
        "Ollama cannot force a tool call: tool_choice 'allowed_tools' with mode 'required' is not supported (use mode 'auto').",
        "tool_choice.allowed_tools.mode",
        "unsupported_parameter",
      );
    case "none":
      return undefined;
    case "required":
    case "function":
      throw invalidRequest(
        `Ollama cannot force a tool call: tool_choice '${choice.type}' is not supported (use 'auto' or 'none').`,
        "tool_choice",
        "unsupported_parameter",
      );
    default:
      return unreachable(choice, "tool choice");
  }
}

function formatFor(format: ResponseFormat | undefined): "json" | JsonObject | undefined {
  if (format === undefined) return undefined;
  switch (format.type) {
    case "text":
      return undefined;
    case "json_object":
      return "json";
    case "json_schema":
      return format.schema ?? "json";
    default:
      return unreachable(format, "response format");
  }
}

function optionsFor(req: ChatRequest): JsonObject {
  const native = req.extra.options;
  if (native !== undefined && !isObject(native)) throw invalidRequest("'options' must be an object of Ollama model options.", "options");
  const options: JsonObject = { ...native };
  const set = (key: string, value: unknown): void => {
    if (value !== undefined) options[key] = value;
  };
  set("temperature", req.temperature);
  set("top_p", req.topP);
  set("num_predict", req.maxTokens);
  set("stop", req.stop);
  set("seed", req.seed);
  set("presence_penalty", req.presencePenalty);
  set("frequency_penalty", req.frequencyPenalty);
  return options;
}

/**
 * OpenAI `reasoning_effort` → Ollama `think`, as Ollama's own OpenAI layer maps it
 * (openai/openai.go `thinkFromReasoningEffort`): ends of OpenAI's scale clamp to Ollama's.
 */
export function thinkFromReasoningEffort(effort: string): boolean | string {
  switch (effort) {
    case "none":
      return false;
    case "minimal":
      return "low";
    case "low":
    case "medium":
    case "high":
    case "max":
      return effort;
    case "xhigh":
      return "max";
    default:
      throw invalidRequest(
        `Ollama does not know reasoning_effort '${effort}' (use none, minimal, low, medium, high, xhigh or max).`,
        "reasoning_effort",
        "unsupported_value",
      );
  }
}
