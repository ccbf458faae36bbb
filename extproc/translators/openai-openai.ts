/**
 * OpenAI-speaking client → OpenAI-compatible backend (OpenAI itself, Azure OpenAI, and every
 * provider that is configuration only). The same schema on both sides: bodies are left
 * byte-for-byte alone unless something must change (the model name, usage forced on streams,
 * the provider's parameter differences), and usage is read on the way back.
 */
import type { ChatRequest, EmbeddingsRequest, Usage } from "../../common/canonical/types.ts";
import type { ParamRules } from "../providers/catalog.ts";
import { isObject, type JsonObject } from "../../common/schemas/fields.ts";
import { parseOpenAIUsage } from "../../common/schemas/openai-chat-response.ts";
import { toOpenAIEmbeddingsRequest } from "../../common/schemas/openai-embeddings.ts";
import { SseParser, sseData, type SseEvent } from "../../common/schemas/sse.ts";
import { GatewayError, toErrorResponse } from "../../common/errors.ts";
import type { BackendContext } from "./codec.ts";
import type { CallPlan } from "./compose.ts";
import { upstreamError } from "./upstream-error.ts";
import { readUpstreamJson } from "./upstream-json.ts";
import type { Headers, StreamTranslator, TranslatedChunk, TranslatedResponse } from "./translator.ts";

const JSON_HEADERS: Headers = { "content-type": "application/json" };

/** Where an OpenAI-schema endpoint lives on one provider. */
export interface OpenAIRoute {
  /** `/chat/completions` on OpenAI; `/deployments/<model>/chat/completions?api-version=…` on Azure. */
  path: string;
  params: ParamRules;
}

/** The OpenAI-style path of `operation` for a provider, Azure's deployment layout included. */
export function openAIRoute(operation: "chat/completions" | "embeddings", model: string, params: ParamRules, azureApiVersion?: string): OpenAIRoute {
  if (azureApiVersion === undefined) return { path: `/${operation}`, params };
  return { path: `/deployments/${encodeURIComponent(model)}/${operation}?api-version=${encodeURIComponent(azureApiVersion)}`, params };
}

/** Applies a provider's parameter differences; returns whether anything changed. */
function applyParams(body: JsonObject, params: ParamRules): boolean {
  let changed = false;
  for (const key of params.drop ?? []) {
    if (key in body) {
      delete body[key];
      changed = true;
    }
  }
  for (const [from, to] of Object.entries(params.rename ?? {})) {
    if (from in body) {
      body[to] = body[from];
      delete body[from];
      changed = true;
    }
  }
  return changed;
}

const hasRules = (p: ParamRules) => (p.drop?.length ?? 0) > 0 || Object.keys(p.rename ?? {}).length > 0;

/**
 * The client's body goes on as it came unless something must change, and what changes is
 * changed in the client's own JSON (`raw`, the request as Gearbox forwards it: a conversation's
 * history in front, masked values masked): the model name, `stream_options.include_usage` when
 * Gearbox needs the usage and the client did not ask for it (the options the client did give
 * kept), the provider's parameter differences. Every other field — one Gearbox's canonical form
 * has no place for, a message's own extension — stays where the client put it.
 */
export function planOpenAIToOpenAIChat(req: ChatRequest, raw: JsonObject, ctx: BackendContext, route: OpenAIRoute): CallPlan {
  const forceUsage = ctx.forceStreamUsage && req.stream && req.includeUsage !== true;
  const body = openAIChatBody(raw, req.model === ctx.upstreamModel ? undefined : ctx.upstreamModel, forceUsage, route.params, ctx.clientBody);
  return {
    upstream: body ? { path: route.path, headers: JSON_HEADERS, body } : { path: route.path, headers: JSON_HEADERS },
    response: readJsonResponse,
    stream: () => new OpenAIStream(forceUsage),
  };
}

/**
 * The upstream body when something in the client's must change — `model` renamed, usage forced
 * on a stream, the provider's parameter rules — changed in a copy of the client's JSON; `undefined`
 * when the client's bytes go as they are. Usage forced and nothing else, on a request without
 * `stream_options`: the option is added to the client's bytes (`clientBody`) at their end, with
 * no serialization of the request (~45 µs for a 20 KB conversation, bench/RESULTS.md).
 */
export function openAIChatBody(raw: JsonObject, model: string | undefined, forceUsage: boolean, params: ParamRules, clientBody?: Buffer): Buffer | undefined {
  if (model === undefined && !hasRules(params)) {
    if (!forceUsage) return undefined;
    const spliced = clientBody && !("stream_options" in raw) ? withLastMember(clientBody, USAGE_OPTION) : undefined;
    if (spliced) return spliced;
  }
  // A copy: `raw` is the request's own (its cache key, a fallback's plan, a shadow call).
  const json: JsonObject = Object.assign({}, raw);
  if (model !== undefined) json.model = model;
  if (forceUsage) json.stream_options = Object.assign({}, isObject(raw.stream_options) ? raw.stream_options : undefined, { include_usage: true });
  const changed = applyParams(json, params);
  return changed || model !== undefined || forceUsage ? Buffer.from(JSON.stringify(json)) : undefined;
}

const USAGE_OPTION = Buffer.from('"stream_options":{"include_usage":true}');

/**
 * The JSON object in `bytes` with `member` (`"key":value`) added as its last member; `undefined`
 * when the bytes do not end as an object does. The last byte of a JSON object's text but
 * whitespace is its closing brace, and a member before it needs a comma.
 */
export function withLastMember(bytes: Buffer, member: Buffer): Buffer | undefined {
  let close = bytes.length - 1;
  while (close >= 0 && isSpace(bytes[close])) close--;
  if (close <= 0 || bytes[close] !== 0x7d /* } */) return undefined;
  let before = close - 1;
  while (before >= 0 && isSpace(bytes[before])) before--;
  if (before < 0) return undefined;
  const head = bytes.subarray(0, close);
  return Buffer.concat(bytes[before] === 0x7b /* { */ ? [head, member, CLOSE] : [head, COMMA, member, CLOSE]);
}

const COMMA = Buffer.from(",");
const CLOSE = Buffer.from("}");

export function planOpenAIToOpenAIEmbeddings(req: EmbeddingsRequest, ctx: BackendContext, route: OpenAIRoute): CallPlan {
  const json = req.model === ctx.upstreamModel ? undefined : toOpenAIEmbeddingsRequest(Object.assign({}, req, { model: ctx.upstreamModel }));
  return {
    upstream: json ? { path: route.path, headers: JSON_HEADERS, body: Buffer.from(JSON.stringify(json)) } : { path: route.path, headers: JSON_HEADERS },
    response: readJsonResponse,
    stream: () => new OpenAIStream(false),
  };
}

/** Success: unchanged bytes, usage read. Error: unchanged if OpenAI-shaped, else shaped. */
function readJsonResponse(status: number, headers: Headers, body: Buffer): TranslatedResponse {
  if (status < 400) {
    const usage = usageAtEnd(body) ?? usageOf(readUpstreamJson(body));
    return usage ? { usage } : {};
  }
  const json = readUpstreamJson(body);
  const clientShaped = isObject(json) && isObject(json.error) && typeof json.error.message === "string";
  return { error: { error: upstreamError(status, headers, body), clientShaped } };
}

const usageOf = (json: unknown): Usage | undefined => (isObject(json) ? parseOpenAIUsage(json.usage) : undefined);

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const USAGE_KEY = Buffer.from('"usage"');

/**
 * The `usage` of an OpenAI answer read from the last `"usage": {…}` in its bytes, without parsing
 * the rest (OpenAI and the compatible providers put it last, after the choices): the body is
 * passed on byte for byte, so its usage is all Gearbox reads of it. `undefined` when the last
 * `"usage"` is not a key holding an object of token counts — an answer without usage, or one
 * laid out otherwise — and the caller parses the whole body instead.
 */
function usageAtEnd(body: Buffer): Usage | undefined {
  const at = body.lastIndexOf(USAGE_KEY);
  // Inside a string the quote would be escaped.
  if (at <= 0 || body[at - 1] === BACKSLASH) return undefined;
  let i = at + USAGE_KEY.length;
  while (isSpace(body[i])) i++;
  if (body[i++] !== 0x3a /* : */) return undefined;
  while (isSpace(body[i])) i++;
  if (body[i] !== 0x7b /* { */) return undefined;
  const start = i;
  let depth = 0;
  let inString = false;
  for (; i < body.length; i++) {
    const c = body[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === 0x7b) depth++;
    else if (c === 0x7d && --depth === 0) break;
  }
  if (depth !== 0) return undefined;
  // Decoded from its range: no Buffer view made for it.
  const raw = readUpstreamJson(body.toString("utf8", start, i + 1));
  if (!isObject(raw) || (typeof raw.prompt_tokens !== "number" && typeof raw.completion_tokens !== "number")) return undefined;
  return parseOpenAIUsage(raw);
}

const isSpace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/**
 * Forwards the stream event by event, exactly as received, reading usage on the way. It holds
 * back a partial event until its end arrives, so a malformed or cut stream can be closed with
 * one clean OpenAI error event instead of garbage: invalid JSON in an event, or an end before
 * `[DONE]`. With `hideUsageChunk`, the usage-only chunk Gearbox forced is dropped.
 */
class OpenAIStream implements StreamTranslator {
  private readonly parser = new SseParser();
  private usage: Usage | undefined;
  private done = false;
  private failed = false;
  private readonly normalizer = new ChunkNormalizer();

  constructor(private readonly hideUsageChunk: boolean) {}

  push(chunk: Buffer): TranslatedChunk {
    return this.handle(this.parser.push(chunk), false);
  }

  end(): TranslatedChunk {
    return this.handle(this.parser.flush(), true);
  }

  private handle(events: SseEvent[], last: boolean): TranslatedChunk {
    if (this.failed) return { body: Buffer.alloc(0) };
    const kept: Buffer[] = [];
    for (const event of events) {
      if (event.data === "[DONE]") {
        this.done = true;
        kept.push(event.raw);
        continue;
      }
      const json = parseEvent(event.data);
      if (json === undefined) return this.fail(kept, "The upstream stream sent an event that is not valid JSON.", "upstream_malformed");
      if (isObject(json.usage)) {
        const usage = parseOpenAIUsage(json.usage);
        if (usage) this.usage = usage;
        if (this.hideUsageChunk && usage && Array.isArray(json.choices) && json.choices.length === 0) continue;
      }
      kept.push(this.normalizer.normalize(json) ? sseData(JSON.stringify(json)) : event.raw);
    }
    if (last && !this.done) return this.fail(kept, "The upstream stream ended before it was complete.", "upstream_stream_truncated");
    const out: TranslatedChunk = { body: kept.length === 1 ? (kept[0] ?? Buffer.alloc(0)) : Buffer.concat(kept) };
    if (this.usage) out.usage = this.usage;
    return out;
  }

  private fail(kept: Buffer[], message: string, code: string): TranslatedChunk {
    this.failed = true;
    const error = new GatewayError(502, "upstream_error", message, { code });
    kept.push(sseData(toErrorResponse(error).body.toString("utf8")));
    const out: TranslatedChunk = { body: Buffer.concat(kept) };
    if (this.usage) out.usage = this.usage;
    return out;
  }
}

/**
 * Mends what some OpenAI-compatible providers get wrong in stream chunks, so OpenAI SDKs can
 * rebuild the completion: a first delta without `role`, tool-call deltas without `index`
 * (Mistral), tool-call indexes that do not start at 0 or skip (some proxies). Chunks that need
 * nothing are forwarded byte for byte.
 */
class ChunkNormalizer {
  private readonly roleSent = new Set<number>();
  private readonly toolIndexes = new Map<number, Map<string, number>>();
  private readonly latest = new Map<number, string>();

  /** Fixes `chunk` in place; true when it changed. */
  normalize(chunk: JsonObject): boolean {
    if (!Array.isArray(chunk.choices)) return false;
    let changed = false;
    const choices: unknown[] = chunk.choices;
    for (let position = 0; position < choices.length; position++) {
      const choice = choices[position];
      if (!isObject(choice) || !isObject(choice.delta)) continue;
      const index = typeof choice.index === "number" ? choice.index : position;
      if (!this.roleSent.has(index)) {
        this.roleSent.add(index);
        if (choice.delta.role === undefined) {
          choice.delta.role = "assistant";
          changed = true;
        }
      }
      if (Array.isArray(choice.delta.tool_calls)) changed = this.toolCalls(index, choice.delta.tool_calls) || changed;
    }
    return changed;
  }

  /**
   * Dense tool-call indexes per choice, in order of first appearance. A delta without an index
   * starts a new call when it carries an id, else continues the latest call. A call's first
   * delta gets `type: "function"` when the provider left it out.
   */
  private toolCalls(choice: number, calls: unknown[]): boolean {
    let dense = this.toolIndexes.get(choice);
    if (!dense) this.toolIndexes.set(choice, (dense = new Map<string, number>()));
    let changed = false;
    for (const call of calls) {
      if (!isObject(call)) continue;
      const hasId = typeof call.id === "string" && call.id !== "";
      const key = typeof call.index === "number" ? `index:${call.index}` : hasId ? `id:${String(call.id)}` : this.latest.get(choice);
      let target = key === undefined ? undefined : dense.get(key);
      if (target === undefined) {
        target = dense.size;
        dense.set(key ?? `position:${target}`, target);
      }
      this.latest.set(choice, key ?? `position:${target}`);
      if (call.index !== target) {
        call.index = target;
        changed = true;
      }
      if (hasId && call.type === undefined) {
        call.type = "function";
        changed = true;
      }
    }
    return changed;
  }
}

function parseEvent(data: string): JsonObject | undefined {
  const json = readUpstreamJson(data);
  return isObject(json) ? json : undefined;
}
