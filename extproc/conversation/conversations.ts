/**
 * Conversations as the processor uses them. `open` reads the stored conversation (a store that
 * fails or is late means the request goes on with what the client sent, logged) and assembles the
 * history in front of the client's messages; the request body is rewritten in the client's own
 * schema, as if the client had sent the whole history, so every backend and pass-through sees one
 * ordinary request. Once the route is known, `forTarget` fits the history to the target: the whole
 * of it while it fits the budget (`history_share` of the target's context window) and the gear did
 * not change; else the summary of what is older than the last two full turns, then those turns.
 * When the answer is complete, `finish` appends the exchange (the new messages and the answer).
 */
import type { Message } from "../../common/canonical/types.ts";
import { GatewayError, invalidRequest } from "../../common/errors.ts";
import { fail, ok, type Result } from "../../common/result.ts";
import { isObject, type JsonObject } from "../../common/schemas/fields.ts";
import { messageToOpenAI } from "../../common/schemas/openai-chat-emit.ts";
import type { Logger } from "../../common/telemetry/logger.ts";
import { toAnthropicPrompt } from "../translators/backends/anthropic-messages.ts";
import { AnswerReader, type AnswerSchema } from "./answer-reader.ts";
import { assemble, type Assembled } from "./assemble.ts";
import { compressed, uncompressed, type CompressedHistory } from "./compress.ts";
import type { ConversationsConfig } from "./config-schema.ts";
import type { EdgeSummarizer } from "./edge-summarizer.ts";
import type { EdgeTokenCounts } from "./edge-tokens.ts";
import type { ConversationStore, ConversationTarget, StoredConversation } from "./store.ts";
import { tokenCounterFor, type TokenCounter } from "./tokens.ts";
import { contextWindow } from "./windows.ts";

export const CONVERSATION_HEADER = "x-gearbox-conversation-id";
export const CONVERSATION_FIELD = "conversation_id";
/** What an id may be: 1–128 of letters, digits and `_ . : -`, starting with a letter or digit. */
const ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/** Which API a conversation request came in on (its body is rewritten in that schema). */
export type ConversationApi = AnswerSchema;

/** What a request sent and what of it went to the target, for the response header and the request log. */
export interface ConversationStats {
  /** Tokens of the whole history in front of the new messages. */
  historyTokens: number;
  /** Tokens of the history as sent (summary and kept messages). */
  sentTokens: number;
  summaryTokens: number;
  /** Stored messages the summary stood for. */
  summarized: number;
  /** Messages the store held before this exchange. */
  stored: number;
  /** The store failed or was late: the request went on with what the client sent. */
  degraded: boolean;
}

/** The conversation id of a request: the body's `conversation_id` (the brief's) or the header; a bad one names the field. */
export function conversationIdOf(json: unknown, headers: Readonly<Record<string, string>>): Result<string | undefined, GatewayError> {
  const body = isObject(json) ? json[CONVERSATION_FIELD] : undefined;
  const [value, param] = body !== undefined && body !== null ? [body, CONVERSATION_FIELD] : [headers[CONVERSATION_HEADER], CONVERSATION_HEADER];
  if (value === undefined) return ok(undefined);
  if (typeof value !== "string" || !ID.test(value))
    return fail(
      invalidRequest(`'${param}' must be 1 to 128 letters, digits, '_', '.', ':' or '-', starting with a letter or digit.`, param, "invalid_conversation_id"),
    );
  return ok(value);
}

/** The request body without `conversation_id` (Gearbox's field: no provider knows it). */
export function withoutConversationField(json: JsonObject): JsonObject {
  if (!(CONVERSATION_FIELD in json)) return json;
  const { [CONVERSATION_FIELD]: _dropped, ...rest } = json;
  return rest;
}

export class Conversations {
  constructor(
    readonly store: ConversationStore,
    readonly settings: ConversationsConfig,
    private readonly logger: Logger,
    readonly extras: {
      /** Rewrites new summaries with the edge model beside the request; absent → extractive only. */
      summarizer?: EdgeSummarizer;
      /** Edge models' token counts from the agents' tokenizer; absent → `o200k_base` for them too. */
      edgeTokens?: EdgeTokenCounts;
    } = {},
  ) {}

  get summarizer(): EdgeSummarizer | undefined {
    return this.extras.summarizer;
  }

  /** Whether `tenant` refuses unknown ids (404) instead of starting a conversation. */
  requireExisting(tenant: string): boolean {
    return this.settings.tenants[tenant]?.require_existing ?? this.settings.require_existing;
  }

  /** Whether `tenant` lets the store keep values the data boundary detected (else they are stored masked). */
  keepsOriginals(tenant: string): boolean {
    return this.settings.tenants[tenant]?.keep_originals ?? this.settings.keep_originals;
  }

  /** The token counter for `model` on `target`. */
  counterFor(target: ConversationTarget, model: string): TokenCounter {
    return (target === "edge" ? this.extras.edgeTokens?.counterFor(model) : undefined) ?? tokenCounterFor(model);
  }

  /**
   * The request's conversation, its history assembled. A store failure is logged and the request
   * goes on with what the client sent; an unknown id is a 404 where the tenant requires existing ids.
   */
  async open(
    tenant: string,
    id: string,
    api: ConversationApi,
    json: JsonObject,
    messages: readonly Message[],
    requestId: string,
  ): Promise<ConversationTurn | GatewayError> {
    let stored: StoredConversation | undefined;
    let degraded = false;
    try {
      stored = await this.store.get(tenant, id);
    } catch (err) {
      degraded = true;
      this.logger.warn(
        { request_id: requestId, err: err instanceof Error ? err.message : String(err) },
        "conversation store failed; the request goes on with what the client sent",
      );
    }
    if (!stored && !degraded && this.requireExisting(tenant))
      return new GatewayError(404, "not_found_error", "No conversation with this id.", { param: CONVERSATION_FIELD, code: "conversation_not_found" });
    return new ConversationTurn(this, { tenant, id, api, json, messages, stored, degraded, requestId, logger: this.logger });
  }
}

interface TurnSetup {
  tenant: string;
  id: string;
  api: ConversationApi;
  json: JsonObject;
  messages: readonly Message[];
  stored: StoredConversation | undefined;
  degraded: boolean;
  requestId: string;
  logger: Logger;
}

export class ConversationTurn {
  readonly assembled: Assembled;
  /** Reads the answer the client gets, for the store. */
  readonly answer: AnswerReader;
  stats: ConversationStats;
  /** The history in seq space (the stored messages) when the store's summary applies to it. */
  private readonly history: readonly Message[];
  private readonly firstSeq: number;
  private finished = false;
  /** What the store keeps of each text of the exchange (`protect`); absent: the text as it is. */
  private keep: ((text: string) => string) | undefined;

  constructor(
    private readonly owner: Conversations,
    private readonly setup: TurnSetup,
  ) {
    const stored = setup.stored;
    this.assembled = assemble(stored?.messages ?? [], setup.messages);
    const { prepend, client, newMessages } = this.assembled;
    // The history before the new messages; in the store's sequence numbers when it came from the store.
    const older = [...prepend, ...client.slice(0, client.length - newMessages.length)];
    const fromStore = stored !== undefined && older.length === stored.messages.length;
    this.history = older;
    this.firstSeq = fromStore ? stored.dropped : 0;
    this.answer = new AnswerReader(setup.api);
    this.stats = { historyTokens: 0, sentTokens: 0, summaryTokens: 0, summarized: 0, stored: stored?.messages.length ?? 0, degraded: setup.degraded };
  }

  get id(): string {
    return this.setup.id;
  }

  /** The target that answered the conversation's last exchange (stickiness across replicas). */
  get lastTarget(): ConversationTarget | undefined {
    return this.setup.stored?.lastTarget;
  }

  /** The body with the whole history: what routing, the caches and limits see. */
  full(): JsonObject {
    return this.rewrite(uncompressed(this.input()));
  }

  /**
   * The body for `target` on `model`: the whole history while it fits and the gear did not
   * change; else the summary of everything older than the last two full turns.
   */
  forTarget(target: ConversationTarget, model: string): JsonObject {
    const counter = this.owner.counterFor(target, model);
    const settings = this.owner.settings;
    const budget = contextWindow(model, target, settings.context_windows, settings.edge_context_tokens) * settings.history_share;
    const whole = uncompressed(this.input());
    const wholeTokens = historyTokens(whole, counter);
    const switched = this.lastTarget !== undefined && this.lastTarget !== target;
    const overCap = this.history.length > settings.max_messages;
    const fitted = switched || wholeTokens > budget || overCap ? compressed(this.input()) : whole;
    this.stats = {
      ...this.stats,
      historyTokens: wholeTokens,
      sentTokens: historyTokens(fitted, counter),
      summaryTokens: summaryTokens(fitted, counter),
      summarized: fitted.summarized,
    };
    this.keepSummary(fitted, overCap);
    return this.rewrite(fitted);
  }

  /** The exchange is stored with `mask` applied to every text of it (values the tenant's store may not keep). */
  protect(mask: (text: string) => string): void {
    this.keep = mask;
  }

  /** Appends the exchange (the new messages and the answer) when the client got a complete answer. */
  finish(target: ConversationTarget | undefined, answered: boolean): void {
    if (this.finished) return;
    this.finished = true;
    const reply = answered ? this.answer.message() : undefined;
    if (!reply || !target) return;
    const { tenant, id, requestId, logger } = this.setup;
    const keep = this.keep;
    const exchange = keep ? [...this.assembled.newMessages, reply].map((m) => mapText(m, keep)) : [...this.assembled.newMessages, reply];
    this.owner.store
      .append(tenant, id, exchange, target)
      .catch((err: unknown) =>
        logger.warn({ request_id: requestId, err: err instanceof Error ? err.message : String(err) }, "conversation store: the exchange was not stored"),
      );
  }

  private input() {
    return { history: this.history, firstSeq: this.firstSeq, summary: this.setup.stored?.summary };
  }

  /** A new summary is saved for the next turns (incremental); past the cap, the messages it covers are compacted away. */
  private keepSummary(fitted: CompressedHistory, overCap: boolean): void {
    const summary = fitted.summary;
    const stored = this.setup.stored;
    if (!summary || !stored || this.firstSeq !== stored.dropped || this.history.length !== stored.messages.length) return;
    if (stored.summary && stored.summary.through >= summary.through && !overCap) return;
    const { tenant, id, requestId, logger } = this.setup;
    const store = this.owner.store;
    const write = overCap ? store.compact(tenant, id, stored.dropped, summary) : store.saveSummary(tenant, id, summary);
    const notSaved = (err: unknown) =>
      logger.warn({ request_id: requestId, err: err instanceof Error ? err.message : String(err) }, "conversation store: the summary was not saved");
    void Promise.resolve(write).catch(notSaved);
    const edge = this.owner.summarizer;
    const extended = fitted.extended;
    if (!edge || !extended) return;
    // The edge rewrites the summary beside the request; the next turns get it, this one has the extractive one.
    void edge.summarize(extended.from?.text, extended.aged, requestId).then((result) => {
      if (!result.ok) {
        logger.info({ request_id: requestId, reason: result.reason }, "edge summary not written; the extractive summary stands");
        return;
      }
      return store.saveSummary(tenant, id, { through: summary.through, text: result.text, by: edge.by }).catch(notSaved);
    });
  }

  /** The client's body with `history` in front of its own messages, in its own schema. */
  private rewrite(history: CompressedHistory): JsonObject {
    const { json, api } = this.setup;
    const body = withoutConversationField(json);
    const raw: unknown[] = Array.isArray(json.messages) ? (json.messages as unknown[]) : [];
    const { system, prepend, newMessages } = this.assembled;
    const note = history.summary ? summaryNote(history.summary.text) : undefined;
    if (api === "openai") {
      // OpenAI messages map one to one: the client's own stay as it wrote them.
      const rawSystem = raw.slice(0, system.length);
      const rawOwn = raw.slice(system.length);
      if (note === undefined) return { ...body, messages: [...rawSystem, ...prepend.map(messageToOpenAI), ...rawOwn] };
      const rawNew = rawOwn.slice(rawOwn.length - newMessages.length);
      return { ...body, messages: [...rawSystem, { role: "system", content: note }, ...history.kept.map(messageToOpenAI), ...rawNew] };
    }
    // Anthropic: a message may be several canonical ones (tool results): a summarized history is written whole.
    if (note === undefined) return { ...body, messages: [...toAnthropicPrompt(prepend).messages, ...raw] };
    return { ...body, system: appendSystem(json.system, note), messages: toAnthropicPrompt([...history.kept, ...newMessages]).messages };
  }
}

/** `m` with `f` applied to every text it carries: content, tool-call arguments, refusal and reasoning. */
export function mapText(m: Message, f: (text: string) => string): Message {
  const content = <T extends { type: string }>(c: string | T[]): string | T[] =>
    typeof c === "string" ? f(c) : c.map((p) => ("text" in p && typeof p.text === "string" ? { ...p, text: f(p.text) } : p));
  if (m.role !== "assistant") return { ...m, content: content(m.content) } as Message;
  return {
    ...m,
    content: m.content === null ? null : content(m.content),
    ...(m.toolCalls && { toolCalls: m.toolCalls.map((c) => ({ ...c, arguments: f(c.arguments) })) }),
    ...(typeof m.refusal === "string" && { refusal: f(m.refusal) }),
    ...(m.reasoning !== undefined && { reasoning: f(m.reasoning) }),
  };
}

const SUMMARY_PREFIX = "Summary of the earlier conversation, kept by the gateway (quoted verbatim):";

function summaryNote(text: string): string {
  return `${SUMMARY_PREFIX}\n${text}`;
}

function appendSystem(system: unknown, note: string): unknown {
  if (system === undefined || system === null || system === "") return note;
  if (typeof system === "string") return `${system}\n\n${note}`;
  if (Array.isArray(system)) return [...(system as unknown[]), { type: "text", text: note }];
  return system;
}

/**
 * The summary note's tokens, counted line by line and kept per summary object: a summary that
 * extends a counted one costs only its new lines (the stored summary is counted once, not on
 * every turn that sends it); within a token per line of counting the note whole.
 */
function summaryTokens(h: CompressedHistory, counter: TokenCounter): number {
  const summary = h.summary;
  if (!summary) return 0;
  return counter.memo(summary, () => {
    const base = h.extended?.from;
    if (base && summary.text.startsWith(base.text))
      return counter.memo(base, () => lineTokens(base.text, counter, true)) + lineTokens(summary.text.slice(base.text.length), counter, false);
    return lineTokens(summary.text, counter, true);
  });
}

/** Tokens of `text`'s non-empty lines, one more per line for its break; `whole`: with the note's prefix. */
function lineTokens(text: string, counter: TokenCounter, whole: boolean): number {
  let tokens = whole ? counter.text(SUMMARY_PREFIX) : 0;
  for (const line of text.split("\n")) if (line !== "") tokens += 1 + counter.text(line);
  return tokens;
}

function historyTokens(h: CompressedHistory, counter: TokenCounter): number {
  return summaryTokens(h, counter) + (h.kept.length > 0 ? counter.messages(h.kept) : 0);
}
