/**
 * A caller's limits as limiter checks, and the estimate a call reserves before it is sent.
 *
 * Tenant and key limits are checked together in one all-or-nothing admission (see
 * `store/limiter.ts`), in this order: runaway, concurrency, requests/s, tokens/min, daily cost;
 * the tenant before the key on each. The first that refuses names the error. Tokens per minute
 * and the daily cost cap meter cloud calls only: edge calls cost nothing and are bounded by
 * requests/s and concurrency (so a tenant over a cap can still be served on the edge).
 *
 * Windows: requests/s slides over one second; tokens per UTC minute and cost per UTC day are
 * fixed windows of the store's clock. Cost is counted in nano-USD so Redis adds it exactly.
 *
 * Estimate (before the call, reconciled with the provider's usage after it):
 * - input tokens ≈ characters / 4, except CJK ideographs, kana and hangul at 1 token each;
 *   + 4 per message for the chat template; each image, audio or file part counts 765 tokens
 *   (a high-detail 1024² image on OpenAI); tool definitions count as their JSON text.
 * - output tokens = `max_tokens` (× `n`), or 512 when the request sets none.
 * - cost = those tokens at the model's list price (`providers/cost.ts`); 0 when unpriced.
 */
import type { ChatRequest, ContentPart, EmbeddingsRequest, Message } from "../../common/canonical/types.ts";
import type { RouteTarget } from "../routing/route-header.ts";
import type { Caller, Limits } from "./model.ts";
import type { ModelPrice } from "../providers/catalog.ts";
import { costUsd } from "../providers/cost.ts";
import type { Check } from "../store/limiter.ts";

export const LIMIT_NAMES = ["requests_per_second", "tokens_per_minute", "max_concurrent", "daily_cost_usd", "runaway"] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

/** Where a call goes (the routing policy's one target type): cost and token budgets apply to the cloud only. */
export type { RouteTarget } from "../routing/route-header.ts";

export interface CallEstimate {
  inputTokens: number;
  maxOutputTokens: number;
  costUsd: number;
}

export const DEFAULT_MAX_OUTPUT_TOKENS = 512;
const PART_TOKENS = 765;
const MESSAGE_TOKENS = 4;
export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;
/** Meters a reservation is settled with. */
export const METERS = { tokens: "tokens", cost: "nano_usd" } as const;

/** A check with what the error and headers need to say about it. */
export interface PlannedCheck {
  check: Check;
  limit: LimitName;
  /** Absent → the tenant's limit. */
  key?: { id: string; prefix: string };
  /** The limit as configured (requests/s, tokens, requests in flight, USD, identical requests). */
  configured: number;
}

/** The checks `caller` passes for one call, tenant before key; `runaway` first when given. */
export function planChecks(caller: Caller, target: RouteTarget, estimate: CallEstimate, runaway?: PlannedCheck): PlannedCheck[] {
  const scopes: { limits: Limits; rel: string; label: string; key?: PlannedCheck["key"] }[] = [{ limits: caller.tenant.limits, rel: "", label: "tenant" }];
  const key = caller.key;
  if (key?.limits) scopes.push({ limits: key.limits, rel: `k:${key.id}:`, label: `key:${key.id}`, key: { id: key.id, prefix: key.prefix } });
  const planned: PlannedCheck[] = runaway ? [runaway] : [];
  const add = (limit: keyof Limits, make: (value: number, rel: string, label: string) => Check) => {
    for (const scope of scopes) {
      const value = scope.limits[limit];
      if (value === undefined) continue;
      planned.push({ check: make(value, scope.rel, `${scope.label}/${limit}`), limit, configured: value, ...(scope.key && { key: scope.key }) });
    }
  };
  add("max_concurrent", (value, rel, label) => ({ kind: "lease", key: `${rel}conc`, limit: value, label }));
  add("requests_per_second", (value, rel, label) => ({ kind: "rate", key: `${rel}rps`, label, ...rateWindow(value) }));
  if (target === "cloud") {
    const tokens = estimate.inputTokens + estimate.maxOutputTokens;
    add("tokens_per_minute", (value, rel, label) => ({
      kind: "budget",
      key: `${rel}tpm`,
      label,
      limit: value,
      amount: tokens,
      windowMs: MINUTE_MS,
      meter: METERS.tokens,
    }));
    const cost = nanoUsd(estimate.costUsd);
    add("daily_cost_usd", (value, rel, label) => ({
      kind: "budget",
      key: `${rel}usd`,
      label,
      limit: nanoUsd(value),
      amount: cost,
      windowMs: DAY_MS,
      meter: METERS.cost,
    }));
  }
  return planned;
}

/**
 * A requests/s limit as a whole number of requests per window: 100/s → 100 per 1 s; 0.5/s →
 * 1 per 2 s; 2.5/s → 2 per 800 ms (the rate is kept exactly, the burst rounded down).
 */
export function rateWindow(perSecond: number): { limit: number; windowMs: number } {
  const limit = Math.max(1, Math.floor(perSecond));
  return { limit, windowMs: Math.round((1000 * limit) / perSecond) };
}

/** USD in whole nano-dollars (the store adds integers; limit and amounts round alike). */
export function nanoUsd(usd: number): number {
  return Math.round(usd * 1e9);
}

/** Any character from the first CJK range up: text without one (Latin and most other scripts) has no CJK to count. */
const MAYBE_CJK = /[\u3040-\uffff]/;

/**
 * Tokens of `text`: CJK characters 1 each, everything else 4 characters a token. Text with no
 * character from U+3040 up is told by one regular-expression test (native; on a one-byte string,
 * which cannot hold one, V8 answers without reading it): the character loop cost ~2.4 ns a
 * character, ~30 µs for a 20 KB conversation, on every admitted chat call.
 */
export function estimateTokens(text: string): number {
  return MAYBE_CJK.test(text) ? tokensByCharacter(text) : Math.ceil(text.length / 4);
}

/** `estimateTokens` with every character's code tested against the CJK ranges. */
export function tokensByCharacter(text: string): number {
  let cjk = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (
      (c >= 0x3040 && c <= 0x30ff) ||
      (c >= 0x3400 && c <= 0x4dbf) ||
      (c >= 0x4e00 && c <= 0x9fff) ||
      (c >= 0xac00 && c <= 0xd7af) ||
      (c >= 0xf900 && c <= 0xfaff)
    )
      cjk++;
  }
  return cjk + Math.ceil((text.length - cjk) / 4);
}

/** The estimate of a call of `inputTokens` in and at most `maxOutputTokens` out, at `price`. */
export function estimateCall(inputTokens: number, maxOutputTokens: number, price: ModelPrice | undefined): CallEstimate {
  const cost = price ? costUsd(price, { inputTokens, outputTokens: maxOutputTokens, totalTokens: inputTokens + maxOutputTokens }) : 0;
  return { inputTokens, maxOutputTokens, costUsd: cost };
}

export function estimateChat(req: ChatRequest, price: ModelPrice | undefined): CallEstimate {
  let input = req.tools && req.tools.length > 0 ? estimateTokens(JSON.stringify(req.tools)) : 0;
  for (const message of req.messages) input += MESSAGE_TOKENS + messageTokens(message);
  return estimateCall(input, (req.maxTokens ?? DEFAULT_MAX_OUTPUT_TOKENS) * (req.n ?? 1), price);
}

export function estimateEmbeddings(req: EmbeddingsRequest, price: ModelPrice | undefined): CallEstimate {
  let input = 0;
  for (const item of req.input) input += typeof item === "string" ? estimateTokens(item) : item.length;
  return estimateCall(input, 0, price);
}

function messageTokens(message: Message): number {
  let tokens = contentTokens(message.content);
  if (message.role === "assistant") {
    if (message.reasoning) tokens += estimateTokens(message.reasoning);
    for (const call of message.toolCalls ?? []) tokens += estimateTokens(call.name) + estimateTokens(call.arguments);
  }
  return tokens;
}

function contentTokens(content: string | readonly ContentPart[] | null): number {
  if (content === null) return 0;
  if (typeof content === "string") return estimateTokens(content);
  let tokens = 0;
  for (const part of content) tokens += part.type === "text" ? estimateTokens(part.text) : PART_TOKENS;
  return tokens;
}
