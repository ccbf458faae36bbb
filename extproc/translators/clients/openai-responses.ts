/**
 * Canonical → what an OpenAI SDK's `responses.create` / `responses.stream` expects: a `response`
 * object, or the Responses streaming events, errors OpenAI-shaped.
 *
 * Output items, in order: `reasoning` (the canonical reasoning as one `summary_text`), `message`
 * (`output_text`, or a `refusal` part), one `function_call` per tool call (`call_id` is the
 * canonical id, which the client sends back in `function_call_output`). `status` is `completed`,
 * or `incomplete` with `incomplete_details.reason` `max_output_tokens` (finish `length`) or
 * `content_filter`. Usage: `input_tokens`, `output_tokens`, `total_tokens` and their details.
 *
 * Streams: `response.created`, `response.in_progress`, then per item `response.output_item.added`,
 * its deltas (`response.reasoning_summary_text.delta`, `response.output_text.delta`,
 * `response.refusal.delta`, `response.function_call_arguments.delta`) between their
 * part/summary added and done events, `response.output_item.done`; and `response.completed` (or
 * `response.incomplete`) with the whole response once the backend's stream has ended (usage
 * comes last on most backends). Each event is `event: <type>` + `data: {…, sequence_number}`.
 * An in-band failure is an `error` event, then `response.failed`.
 */
import { randomBytes } from "node:crypto";
import type { ChatChunk, ChatRequest, ChatResponse, FinishReason, ToolChoice, Usage } from "../../../common/canonical/types.ts";
import { toErrorResponse, type GatewayError } from "../../../common/errors.ts";
import type { JsonObject } from "../../../common/schemas/fields.ts";
import type { ChatClient, ChatStreamEncoder } from "../codec.ts";

/** A fresh id with OpenAI's prefixes (`resp_`, `msg_`, `rs_`, `fc_`). */
export function responsesId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString("hex")}`;
}

type Item = JsonObject & { type: "message" | "reasoning" | "function_call"; id: string };

export function responsesUsage(u: Usage | undefined | null): JsonObject | null {
  if (!u) return null;
  return {
    input_tokens: u.inputTokens,
    input_tokens_details: { cached_tokens: u.cachedInputTokens ?? 0 },
    output_tokens: u.outputTokens,
    output_tokens_details: { reasoning_tokens: u.reasoningTokens ?? 0 },
    total_tokens: u.totalTokens,
  };
}

function toolChoiceOut(choice: ToolChoice | undefined): unknown {
  if (choice === undefined) return "auto";
  switch (choice.type) {
    case "function":
      return { type: "function", name: choice.name };
    case "allowed":
      return { type: "allowed_tools", mode: choice.mode, tools: choice.names.map((name) => ({ type: "function", name })) };
    case "auto":
    case "none":
    case "required":
      return choice.type;
    default:
      return choice satisfies never;
  }
}

/** The response object around `output` (the request's settings echoed as OpenAI does). */
export function responseObject(
  call: ResponsesCallContext,
  createdAt: number,
  req: ChatRequest,
  model: string,
  status: string,
  output: Item[],
  usage: JsonObject | null,
  finish?: FinishReason | null,
): JsonObject {
  const id = call.id;
  const instructions = req.messages[0]?.role === "system" && typeof req.messages[0].content === "string" ? req.messages[0].content : null;
  const incomplete = finish === "length" ? "max_output_tokens" : finish === "content_filter" ? "content_filter" : undefined;
  const format = req.responseFormat;
  return {
    id,
    object: "response",
    created_at: createdAt,
    status: status === "completed" && incomplete !== undefined ? "incomplete" : status,
    error: null,
    incomplete_details: status === "completed" && incomplete !== undefined ? { reason: incomplete } : null,
    instructions,
    max_output_tokens: req.maxTokens ?? null,
    metadata: req.metadata ?? {},
    model,
    output,
    parallel_tool_calls: req.parallelToolCalls ?? true,
    previous_response_id: call.previousResponseId ?? null,
    reasoning: { effort: req.reasoningEffort ?? null, summary: null },
    temperature: req.temperature ?? 1,
    text: {
      format:
        format === undefined || format.type !== "json_schema"
          ? { type: format?.type ?? "text" }
          : { type: "json_schema", name: format.name, schema: format.schema ?? {}, strict: format.strict ?? false },
    },
    tool_choice: toolChoiceOut(req.toolChoice),
    tools: (req.tools ?? []).map((t) => ({
      type: "function",
      name: t.name,
      description: t.description ?? null,
      parameters: t.parameters ?? null,
      strict: t.strict ?? false,
    })),
    top_p: req.topP ?? 1,
    truncation: "disabled",
    usage,
    user: req.user ?? null,
  };
}

const reasoningItem = (id: string, text: string): Item => ({ type: "reasoning", id, summary: [{ type: "summary_text", text }] });
const textPart = (text: string): JsonObject => ({ type: "output_text", text, annotations: [] });
const messageItem = (id: string, status: string, content: JsonObject[]): Item => ({ type: "message", id, status, role: "assistant", content });
const callItem = (id: string, callId: string, name: string, args: string, status: string): Item => ({
  type: "function_call",
  id,
  call_id: callId,
  name,
  arguments: args,
  status,
});

/** Output items of a complete canonical response (its first choice). */
function outputItems(res: ChatResponse): { items: Item[]; finish: FinishReason | null } {
  const choice = res.choices[0];
  const items: Item[] = [];
  if (!choice) return { items, finish: null };
  const m = choice.message;
  if (m.reasoning) items.push(reasoningItem(responsesId("rs"), m.reasoning));
  const text = typeof m.content === "string" ? m.content : (m.content ?? []).map((p) => p.text).join("");
  if (m.refusal) items.push(messageItem(responsesId("msg"), "completed", [{ type: "refusal", refusal: m.refusal }]));
  else if (text !== "" || (m.toolCalls?.length ?? 0) === 0) items.push(messageItem(responsesId("msg"), "completed", [textPart(text)]));
  for (const call of m.toolCalls ?? []) items.push(callItem(responsesId("fc"), call.id, call.name, call.arguments, "completed"));
  return { items, finish: choice.finishReason };
}

/** The Responses body for a complete canonical response. */
export function toResponsesBody(res: ChatResponse, req: ChatRequest, call: ResponsesCallContext): JsonObject {
  const { items, finish } = outputItems(res);
  return responseObject(call, res.created, req, res.model, "completed", items, responsesUsage(res.usage), finish);
}

/** One Responses call: its response id, the response it continues, and what to do with the finished response. */
export interface ResponsesCallContext {
  id: string;
  previousResponseId?: string;
  /** Called with each completed response object (for the response store). */
  onComplete?: (response: JsonObject) => void;
}

/** The Responses client codec for one call. */
export function responsesClient(call: ResponsesCallContext): ChatClient {
  return {
    response: (res, req) => {
      const body = toResponsesBody(res, req, call);
      call.onComplete?.(body);
      return Buffer.from(JSON.stringify(body));
    },
    stream: (req) => new ResponsesStreamEncoder(req, call),
    error: (err) => toErrorResponse(err).body,
  };
}

interface OpenItem {
  item: Item;
  index: number;
  /** The text, refusal, reasoning or arguments so far. */
  text: string;
  /** For messages: `output_text` or `refusal`. */
  part?: "output_text" | "refusal";
  /** For calls: the canonical tool-call index. */
  callIndex?: number;
}

/** Canonical chunks → Responses events, one open output item at a time. */
export class ResponsesStreamEncoder implements ChatStreamEncoder {
  private seq = 0;
  private started = false;
  private readonly done: Item[] = [];
  private open: OpenItem | undefined;
  private model = "";
  private usage: Usage | undefined;
  private finish: FinishReason | null = null;
  private readonly createdAt = Math.floor(Date.now() / 1000);

  constructor(
    private readonly req: ChatRequest,
    private readonly context: ResponsesCallContext,
  ) {}

  chunk(chunk: ChatChunk): Buffer {
    const out: string[] = [];
    if (chunk.model) this.model = chunk.model;
    if (!this.started) this.start(out);
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices.find((c) => c.index === 0);
    if (choice) {
      const { reasoning, content, refusal, toolCalls } = choice.delta;
      if (reasoning) this.text("reasoning", reasoning, out);
      if (refusal) this.text("refusal", refusal, out);
      if (content) this.text("output_text", content, out);
      for (const call of toolCalls ?? []) this.toolCall(call, out);
      if (choice.finishReason) this.finish = choice.finishReason;
    }
    return Buffer.from(out.join(""));
  }

  end(): Buffer {
    const out: string[] = [];
    if (!this.started) this.start(out);
    this.close(out);
    const type = this.finish === "length" || this.finish === "content_filter" ? "response.incomplete" : "response.completed";
    const response = this.response("completed");
    this.emit(type, { response }, out);
    this.context.onComplete?.(response);
    return Buffer.from(out.join(""));
  }

  error(err: GatewayError): Buffer {
    const out: string[] = [];
    const body = toErrorResponse(err).body.toString("utf8");
    const { error } = JSON.parse(body) as { error: JsonObject };
    this.emit("error", { code: error.code ?? error.type, message: error.message, param: error.param ?? null }, out);
    this.emit(
      "response.failed",
      { response: Object.assign({}, this.response("failed"), { error: { code: error.code ?? error.type, message: error.message } }) },
      out,
    );
    return Buffer.from(out.join(""));
  }

  private response(status: string): JsonObject {
    return responseObject(
      this.context,
      this.createdAt,
      this.req,
      this.model || this.req.model,
      status,
      this.done,
      status === "completed" ? responsesUsage(this.usage) : null,
      this.finish,
    );
  }

  private start(out: string[]): void {
    this.started = true;
    const response = this.response("in_progress");
    this.emit("response.created", { response }, out);
    this.emit("response.in_progress", { response }, out);
  }

  private emit(type: string, data: JsonObject, out: string[]): void {
    out.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data, sequence_number: this.seq++ })}\n\n`);
  }

  /** Text for a reasoning or message item, opening one when another kind is open. */
  private text(kind: "reasoning" | "output_text" | "refusal", delta: string, out: string[]): void {
    const open = this.open;
    const same = open !== undefined && (kind === "reasoning" ? open.item.type === "reasoning" : open.item.type === "message" && open.part === kind);
    if (!same) {
      this.close(out);
      this.begin(kind, out);
    }
    const cur = this.open;
    if (!cur) return;
    cur.text += delta;
    const at = { item_id: cur.item.id, output_index: cur.index };
    if (kind === "reasoning") this.emit("response.reasoning_summary_text.delta", Object.assign({}, at, { summary_index: 0, delta }), out);
    else if (kind === "refusal") this.emit("response.refusal.delta", Object.assign({}, at, { content_index: 0, delta }), out);
    else this.emit("response.output_text.delta", Object.assign({}, at, { content_index: 0, delta, logprobs: [] }), out);
  }

  private begin(kind: "reasoning" | "output_text" | "refusal", out: string[]): void {
    const index = this.done.length;
    if (kind === "reasoning") {
      const item: Item = { type: "reasoning", id: responsesId("rs"), summary: [] };
      this.open = { item, index, text: "" };
      this.emit("response.output_item.added", { output_index: index, item }, out);
      this.emit(
        "response.reasoning_summary_part.added",
        { item_id: item.id, output_index: index, summary_index: 0, part: { type: "summary_text", text: "" } },
        out,
      );
      return;
    }
    const item = messageItem(responsesId("msg"), "in_progress", []);
    this.open = { item, index, text: "", part: kind };
    this.emit("response.output_item.added", { output_index: index, item }, out);
    const part = kind === "refusal" ? { type: "refusal", refusal: "" } : textPart("");
    this.emit("response.content_part.added", { item_id: item.id, output_index: index, content_index: 0, part }, out);
  }

  private toolCall(delta: NonNullable<ChatChunk["choices"][number]["delta"]["toolCalls"]>[number], out: string[]): void {
    const open = this.open;
    if (open?.item.type !== "function_call" || open.callIndex !== delta.index) {
      this.close(out);
      const item = callItem(responsesId("fc"), delta.id ?? responsesId("call"), delta.name ?? "", "", "in_progress");
      this.open = { item, index: this.done.length, text: "", callIndex: delta.index };
      this.emit("response.output_item.added", { output_index: this.done.length, item }, out);
    }
    const cur = this.open;
    if (!cur || !delta.arguments) return;
    cur.text += delta.arguments;
    this.emit("response.function_call_arguments.delta", { item_id: cur.item.id, output_index: cur.index, delta: delta.arguments }, out);
  }

  /** Ends the open item with its done events. */
  private close(out: string[]): void {
    const cur = this.open;
    if (!cur) return;
    this.open = undefined;
    const at = { item_id: cur.item.id, output_index: cur.index };
    let item: Item;
    if (cur.item.type === "reasoning") {
      const part = { type: "summary_text", text: cur.text };
      this.emit("response.reasoning_summary_text.done", Object.assign({}, at, { summary_index: 0, text: cur.text }), out);
      this.emit("response.reasoning_summary_part.done", Object.assign({}, at, { summary_index: 0, part }), out);
      item = reasoningItem(cur.item.id, cur.text);
    } else if (cur.item.type === "message") {
      const part = cur.part === "refusal" ? { type: "refusal", refusal: cur.text } : textPart(cur.text);
      if (cur.part === "refusal") this.emit("response.refusal.done", Object.assign({}, at, { content_index: 0, refusal: cur.text }), out);
      else this.emit("response.output_text.done", Object.assign({}, at, { content_index: 0, text: cur.text, logprobs: [] }), out);
      this.emit("response.content_part.done", Object.assign({}, at, { content_index: 0, part }), out);
      item = messageItem(cur.item.id, "completed", [part]);
    } else {
      const name = typeof cur.item.name === "string" ? cur.item.name : "";
      this.emit("response.function_call_arguments.done", Object.assign({}, at, { name, arguments: cur.text }), out);
      item = callItem(cur.item.id, String(cur.item.call_id), name, cur.text, "completed");
    }
    this.done.push(item);
    this.emit("response.output_item.done", { output_index: cur.index, item }, out);
  }
}
