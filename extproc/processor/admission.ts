/**
 * What the processor hands the limits governor: the estimate a call is admitted on, and the real
 * usage it settles with. Pure functions over the call's routing state.
 */
import type { Usage } from "../../common/canonical/types.ts";
import type { CascadeEvent } from "../cascade/cascade.ts";
import type { ParsedCall } from "../endpoints/spec.ts";
import type { ActualUsage } from "../governance/governor.ts";
import { estimateChat, estimateEmbeddings, type CallEstimate } from "../governance/limits.ts";
import type { ModelPrice } from "../providers/catalog.ts";
import { priceOf, type Provider } from "../providers/provider.ts";
import { resolveProvider, type ProviderRoute } from "../routing/provider-route.ts";
import type { EdgeCascade } from "../cascade/cascade.ts";

/** Tokens and cost the call may use: at `price` (the cloud, or a possible upgrade), free without one. */
export function callEstimate(parsed: ParsedCall, price: ModelPrice | undefined): CallEstimate {
  return parsed.call.endpoint === "chat" ? estimateChat(parsed.call.request, price) : estimateEmbeddings(parsed.call.request, price);
}

/**
 * The estimate a routed call is admitted on: a cloud call at its model's list price; an edge
 * answer that may be upgraded at the upgrade model's (the upgrade would cost it); a final edge
 * answer free.
 */
export function routedEstimate(
  parsed: ParsedCall,
  providers: readonly Provider[],
  decision: ProviderRoute | undefined,
  cascade: EdgeCascade | undefined,
): CallEstimate {
  const upgrade = cascade?.upgradeModel;
  const cloud = cascade ? (upgrade === undefined ? undefined : resolveProvider(upgrade, providers)) : undefined;
  const price =
    decision && !cascade
      ? priceOf(decision.provider, decision.upstreamModel)
      : cloud?.ok
        ? priceOf(cloud.value.provider, cloud.value.upstreamModel)
        : undefined;
  return callEstimate(parsed, price);
}

/** The usage a finished call settles with: the upstream's, else both sides of a cascade. */
export function settlementUsage(usage: Usage | undefined, event: CascadeEvent | undefined, cost: number | null | undefined): ActualUsage {
  return {
    inputTokens: usage?.inputTokens ?? (event?.cloud_input_tokens ?? 0) + (event?.edge_input_tokens ?? 0),
    outputTokens: usage?.outputTokens ?? (event?.cloud_output_tokens ?? 0) + (event?.edge_output_tokens ?? 0),
    costUsd: typeof cost === "number" ? cost : 0,
  };
}
