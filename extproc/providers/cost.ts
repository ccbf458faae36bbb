/**
 * What a call cost, from its token usage and the provider's list price (USD per 1 M tokens).
 * Cached input tokens are billed at `cached_input` when the price has one, else as input.
 * Unknown price → `undefined`: an unpriced model is reported as such, never as free.
 */
import type { Usage } from "../../common/canonical/types.ts";
import type { ModelPrice } from "./catalog.ts";
import { priceOf, type Provider } from "./provider.ts";

export function costUsd(price: ModelPrice, usage: Usage): number {
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  const fresh = usage.inputTokens - cached;
  const micro = fresh * price.input + cached * (price.cached_input ?? price.input) + usage.outputTokens * price.output;
  return micro / 1_000_000;
}

/** The cost of `usage` on `provider`'s `model`, or `undefined` when either is unknown. */
export function callCostUsd(provider: Provider, model: string, usage: Usage | undefined): number | undefined {
  if (usage === undefined) return undefined;
  const price = priceOf(provider, model);
  return price === undefined ? undefined : costUsd(price, usage);
}

/** USD rounded to a millionth of a dollar, for logs and headers. */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}
