/** Canonical `ChatRequest` → OpenAI Chat Completions wire JSON (the inverse of the parser). */
import type { ChatRequest, ContentPart, Message, ResponseFormat, ToolChoice } from "../canonical/types.ts";
import { unreachable } from "../errors.ts";
import type { JsonObject } from "./fields.ts";

export function toOpenAIChatRequest(req: ChatRequest): JsonObject {
  // Not `{ ...req.extra, model, messages }`: keys after a leading spread cost ~1 µs each on Node 20.
  const out: JsonObject = Object.assign({}, req.extra, { model: req.model, messages: req.messages.map(messageToOpenAI) });
  if (req.stream) out.stream = true;
  if (req.includeUsage !== undefined) out.stream_options = { include_usage: req.includeUsage };
  if (req.maxTokens !== undefined) out[req.maxTokensParam ?? "max_completion_tokens"] = req.maxTokens;
  set(out, "temperature", req.temperature);
  set(out, "top_p", req.topP);
  set(out, "n", req.n);
  set(out, "stop", req.stop);
  set(out, "presence_penalty", req.presencePenalty);
  set(out, "frequency_penalty", req.frequencyPenalty);
  set(out, "logit_bias", req.logitBias);
  set(out, "logprobs", req.logprobs);
  set(out, "top_logprobs", req.topLogprobs);
  set(out, "seed", req.seed);
  set(out, "user", req.user);
  set(out, "metadata", req.metadata);
  if (req.tools) {
    out.tools = req.tools.map((t) => ({
      type: "function",
      function: {
        name: t.name,
        ...(t.description !== undefined && { description: t.description }),
        ...(t.parameters !== undefined && { parameters: t.parameters }),
        ...(t.strict !== undefined && { strict: t.strict }),
      },
    }));
  }
  if (req.toolChoice) out.tool_choice = toolChoiceToOpenAI(req.toolChoice);
  set(out, "parallel_tool_calls", req.parallelToolCalls);
  if (req.responseFormat) out.response_format = responseFormatToOpenAI(req.responseFormat);
  set(out, "reasoning_effort", req.reasoningEffort);
  return out;
}

function set(out: JsonObject, key: string, value: unknown): void {
  if (value !== undefined) out[key] = value;
}

export function messageToOpenAI(m: Message): JsonObject {
  switch (m.role) {
    case "system":
    case "developer":
      return { role: m.role, content: m.content, ...(m.name !== undefined && { name: m.name }) };
    case "user":
      return {
        role: "user",
        content: typeof m.content === "string" ? m.content : m.content.map(partToOpenAI),
        ...(m.name !== undefined && { name: m.name }),
      };
    case "assistant": {
      const out: JsonObject = { role: "assistant", content: m.content };
      if (m.name !== undefined) out.name = m.name;
      if (m.refusal !== undefined) out.refusal = m.refusal;
      if (m.toolCalls) {
        out.tool_calls = m.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
      }
      return out;
    }
    case "tool":
      return { role: "tool", tool_call_id: m.toolCallId, content: m.content };
    default:
      return unreachable(m, "message role");
  }
}

export function partToOpenAI(part: ContentPart): JsonObject {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text };
    case "image": {
      const url = part.url ?? `data:${part.mediaType ?? "application/octet-stream"};base64,${part.data ?? ""}`;
      return { type: "image_url", image_url: { url, ...(part.detail !== undefined && { detail: part.detail }) } };
    }
    case "audio":
      return { type: "input_audio", input_audio: { data: part.data, format: part.format } };
    case "file":
      return {
        type: "file",
        file: {
          ...(part.fileId !== undefined && { file_id: part.fileId }),
          ...(part.filename !== undefined && { filename: part.filename }),
          ...(part.data !== undefined && { file_data: part.data }),
        },
      };
    default:
      return unreachable(part, "content part");
  }
}

function toolChoiceToOpenAI(choice: ToolChoice): unknown {
  switch (choice.type) {
    case "auto":
    case "none":
    case "required":
      return choice.type;
    case "function":
      return { type: "function", function: { name: choice.name } };
    case "allowed":
      return { type: "allowed_tools", allowed_tools: { mode: choice.mode, tools: choice.names.map((name) => ({ type: "function", function: { name } })) } };
    default:
      return unreachable(choice, "tool choice");
  }
}

function responseFormatToOpenAI(format: ResponseFormat): JsonObject {
  switch (format.type) {
    case "text":
    case "json_object":
      return { type: format.type };
    case "json_schema":
      return {
        type: "json_schema",
        json_schema: {
          name: format.name,
          ...(format.description !== undefined && { description: format.description }),
          ...(format.schema !== undefined && { schema: format.schema }),
          ...(format.strict !== undefined && { strict: format.strict }),
        },
      };
    default:
      return unreachable(format, "response format");
  }
}
