/**
 * Canonical `ChatRequest` → the Anthropic Messages request body. What Anthropic cannot do is a
 * 400 naming the field; what it has no equivalent for and the answer does not depend on is
 * left out. The decisions, field by field:
 *
 * - `max_tokens` is required by Anthropic: `ANTHROPIC_DEFAULT_MAX_TOKENS` when the client set none.
 * - `temperature`: OpenAI allows 0–2, Anthropic 0–1. Values above 1 are clamped to 1 (not
 *   rescaled: 0.7 asks for the same thing of both APIs, and 1 is Anthropic's default).
 * - `top_p` as is; `stop` → `stop_sequences`, but a whitespace-only sequence (`"\n"`) is a 400:
 *   Anthropic rejects it ("each stop sequence must contain non-whitespace").
 * - `user` → `metadata.user_id`. OpenAI `metadata` has no Anthropic place and is not sent.
 * - `n > 1` and `logprobs: true` are 400s: Anthropic returns one choice and no log probabilities.
 * - `presence_penalty`, `frequency_penalty`, `logit_bias`, `seed` and the client's unmodelled
 *   fields (`extra`) are not sent: Anthropic has no equivalent.
 * - `reasoning_effort` → `thinking: {type: "enabled", budget_tokens}` with the budgets of
 *   `THINKING_BUDGET` (`none` sends nothing). The budget is part of `max_tokens`: without a client
 *   limit `max_tokens` becomes budget + `ANTHROPIC_DEFAULT_MAX_TOKENS`; with one, the budget is
 *   cut to fit below it, and a limit that leaves less than Anthropic's minimum budget (1024) is a
 *   400 naming `reasoning_effort`. With thinking on, Anthropic refuses `temperature`, `top_k` and
 *   `top_p` below 0.95, and a forced tool: `temperature` is not sent, `top_p` is raised to 0.95,
 *   and a request that forces a tool (`required`, a named function, the JSON tool) is sent
 *   without thinking. It is also sent without thinking in the middle of a tool loop (the last
 *   assistant message called tools): Anthropic wants that message to start with the signed
 *   thinking block it issued, which the OpenAI schema does not carry. The thinking text comes
 *   back as the message's reasoning (`reasoning_content` for OpenAI clients).
 * - `tools` → `{name, description, input_schema}` (`{type:"object",properties:{}}` when the tool
 *   has no parameters; `strict: true` is sent as Anthropic's `strict`, which constrains the
 *   call's input to the schema). `tool_choice`: auto → auto, required → any,
 *   none → none, a named function → `{type:"tool"}`, `allowed_tools` → only the named tools are
 *   sent, with auto or any; `parallel_tool_calls: false` →
 *   `disable_parallel_tool_use: true`. A request without tools sends no `tool_choice`; if its
 *   history holds tool calls, a placeholder tool goes out with `tool_choice: none`, since
 *   Anthropic rejects `tool_use`/`tool_result` blocks in a request that defines no tools.
 * - `response_format` (json_object, json_schema): when the request has no tools of its own,
 *   Gearbox adds the tool `JSON_RESPONSE_TOOL` with the schema as `input_schema` and forces it;
 *   the response side turns its input back into message content, so the client gets JSON text
 *   that Anthropic's tool-input decoding made well-formed (and schema-shaped). With tools of the
 *   client's own, or a schema whose root is not an object, a system instruction asks for JSON
 *   instead (best effort: the model may still call a tool or wrap the JSON in prose).
 */
import { offeredTools } from "../../../common/canonical/tools.ts";
import type { ChatRequest, FunctionTool, Message, ResponseFormat } from "../../../common/canonical/types.ts";
import { invalidRequest, unreachable } from "../../../common/errors.ts";
import type { BackendContext } from "../codec.ts";
import { toAnthropicPrompt } from "./anthropic-messages.ts";
import { JSON_RESPONSE_TOOL, type AnthropicRequestBody, type AnthropicTool, type AnthropicToolChoice } from "./anthropic-wire.ts";

/** `max_tokens` sent when the client set no limit (Anthropic requires one). */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

/** Anthropic's highest `temperature`; OpenAI's 1–2 are clamped to it. */
export const ANTHROPIC_MAX_TEMPERATURE = 1;

/** Anthropic's smallest `thinking.budget_tokens`. */
export const ANTHROPIC_MIN_THINKING_BUDGET = 1024;

/** Lowest `top_p` Anthropic accepts with thinking on. */
const THINKING_MIN_TOP_P = 0.95;

/** `reasoning_effort` → `thinking.budget_tokens` (0: thinking off). */
export const THINKING_BUDGET: Readonly<Record<string, number>> = { none: 0, minimal: 1024, low: 2048, medium: 8192, high: 24576, xhigh: 32768 };

const PLACEHOLDER_TOOL: AnthropicTool = {
  name: "gearbox_no_tools",
  description: "Placeholder: this request offers no tools. Do not call it.",
  input_schema: { type: "object", properties: {} },
};

/** How `response_format` is carried: a forced tool, or a system instruction. */
interface JsonMode {
  tool?: AnthropicTool;
  instruction?: string;
}

/** Builds the body; throws a 400 `GatewayError` naming the field Anthropic cannot take. */
export function toAnthropicRequest(req: ChatRequest, ctx: BackendContext): AnthropicRequestBody {
  if (req.n !== undefined && req.n > 1) throw invalidRequest("Anthropic returns a single choice: 'n' must be 1.", "n", "unsupported_parameter");
  if (req.logprobs === true)
    throw invalidRequest("Anthropic does not return log probabilities: 'logprobs' must be false.", "logprobs", "unsupported_parameter");
  const ownTools = (offeredTools(req) ?? []).map(toAnthropicTool);
  const json = jsonMode(req.responseFormat, ownTools.length > 0);
  const prompt = toAnthropicPrompt(req.messages, json.instruction);

  const body: AnthropicRequestBody = { model: ctx.upstreamModel, max_tokens: req.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS, ...prompt };
  if (req.temperature !== undefined) body.temperature = Math.min(req.temperature, ANTHROPIC_MAX_TEMPERATURE);
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.stop !== undefined && req.stop.length > 0) body.stop_sequences = stopSequences(req.stop);
  if (req.stream) body.stream = true;
  if (req.user !== undefined && req.user !== "") body.metadata = { user_id: req.user };

  if (ownTools.length > 0) {
    body.tools = ownTools;
    const choice = toolChoice(req, ownTools);
    if (choice) body.tool_choice = choice;
  } else if (json.tool) {
    body.tools = [json.tool];
    body.tool_choice = { type: "tool", name: json.tool.name };
  } else if (req.toolChoice?.type === "function") {
    throw invalidRequest(`'tool_choice' names the function '${req.toolChoice.name}', but the request defines no tools.`, "tool_choice.function.name");
  } else if (req.messages.some(hasToolBlocks)) {
    body.tools = [PLACEHOLDER_TOOL];
    body.tool_choice = { type: "none" };
  }
  if (req.reasoningEffort !== undefined) applyThinking(body, req);
  return body;
}

/** `reasoning_effort` → `thinking` (see the module comment for when it is left off). */
function applyThinking(body: AnthropicRequestBody, req: ChatRequest): void {
  const effort = req.reasoningEffort ?? "none";
  const wanted = THINKING_BUDGET[effort];
  if (wanted === undefined) {
    const known = Object.keys(THINKING_BUDGET)
      .map((e) => `'${e}'`)
      .join(", ");
    throw invalidRequest(`'reasoning_effort' must be one of ${known} for Anthropic, got '${effort}'.`, "reasoning_effort");
  }
  const forced = body.tool_choice?.type === "any" || body.tool_choice?.type === "tool";
  if (wanted === 0 || forced || inToolLoop(req.messages)) return;
  let budget = wanted;
  if (req.maxTokens === undefined) body.max_tokens = budget + ANTHROPIC_DEFAULT_MAX_TOKENS;
  else {
    budget = Math.min(budget, req.maxTokens - 1);
    if (budget < ANTHROPIC_MIN_THINKING_BUDGET) {
      throw invalidRequest(
        `'reasoning_effort' needs a token limit above ${ANTHROPIC_MIN_THINKING_BUDGET} on Anthropic (its smallest thinking budget is part of 'max_tokens', which is ${req.maxTokens}).`,
        "reasoning_effort",
      );
    }
  }
  body.thinking = { type: "enabled", budget_tokens: budget };
  delete body.temperature;
  if (body.top_p !== undefined && body.top_p < THINKING_MIN_TOP_P) body.top_p = THINKING_MIN_TOP_P;
}

/** True when the last assistant message called tools (its results may follow). */
function inToolLoop(messages: readonly Message[]): boolean {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const m = messages[i];
    if (m?.role === "assistant") return (m.toolCalls?.length ?? 0) > 0;
  }
  return false;
}

function toAnthropicTool(tool: FunctionTool, i: number): AnthropicTool {
  if (tool.name === JSON_RESPONSE_TOOL) {
    throw invalidRequest(`'tools[${i}].function.name': '${JSON_RESPONSE_TOOL}' is reserved by Gearbox.`, `tools[${i}].function.name`);
  }
  const params = tool.parameters;
  const inputSchema = params === undefined ? { type: "object", properties: {} } : params.type === undefined ? { type: "object", ...params } : params;
  const out: AnthropicTool = { name: tool.name, input_schema: inputSchema };
  if (tool.description !== undefined) out.description = tool.description;
  if (tool.strict === true) out.strict = true;
  return out;
}

function toolChoice(req: ChatRequest, tools: readonly AnthropicTool[]): AnthropicToolChoice | undefined {
  const serial = req.parallelToolCalls === false ? { disable_parallel_tool_use: true } : {};
  const choice = req.toolChoice ?? (req.parallelToolCalls === false ? { type: "auto" as const } : undefined);
  if (choice === undefined) return undefined;
  switch (choice.type) {
    case "auto":
      return { type: "auto", ...serial };
    case "required":
      return { type: "any", ...serial };
    case "none":
      return { type: "none" };
    case "allowed":
      return { type: choice.mode === "required" ? "any" : "auto", ...serial };
    case "function":
      if (!tools.some((t) => t.name === choice.name)) {
        throw invalidRequest(`'tool_choice' names the function '${choice.name}', which is not in 'tools'.`, "tool_choice.function.name");
      }
      return { type: "tool", name: choice.name, ...serial };
    default:
      return unreachable(choice, "tool choice");
  }
}

function stopSequences(stop: readonly string[]): string[] {
  stop.forEach((s, i) => {
    if (s.trim() === "") {
      const param = stop.length === 1 ? "stop" : `stop[${i}]`;
      throw invalidRequest(`'${param}': Anthropic rejects stop sequences that are empty or only whitespace.`, param, "unsupported_parameter");
    }
  });
  return [...stop];
}

function jsonMode(format: ResponseFormat | undefined, hasOwnTools: boolean): JsonMode {
  if (format === undefined) return {};
  switch (format.type) {
    case "text":
      return {};
    case "json_object":
      if (hasOwnTools) return { instruction: "Answer with a single JSON object and nothing else: no prose, no code fences." };
      return { tool: jsonTool({ type: "object" }, undefined) };
    case "json_schema": {
      const schema = format.schema ?? { type: "object" };
      if (!hasOwnTools && schema.type === "object") return { tool: jsonTool(schema, format.description) };
      return {
        instruction: `Answer with JSON that conforms to the JSON Schema named '${format.name}' below, and nothing else: no prose, no code fences.\n${JSON.stringify(schema)}`,
      };
    }
    default:
      return unreachable(format, "response format");
  }
}

function jsonTool(schema: Record<string, unknown>, description: string | undefined): AnthropicTool {
  const purpose = "Give your final answer by calling this tool: its input is the answer, as JSON.";
  return { name: JSON_RESPONSE_TOOL, description: description === undefined ? purpose : `${purpose} ${description}`, input_schema: schema };
}

function hasToolBlocks(m: Message): boolean {
  return m.role === "tool" || (m.role === "assistant" && (m.toolCalls?.length ?? 0) > 0);
}
