/**
 * Cloud route decision: which provider serves a call and under which model name. A pure
 * function over the call's model, the client's route (`x-gearbox-route` as `route-header.ts`
 * reads it, already `auto` when the policy ignores clients) and the provider catalog; it says
 * why, for `x-gearbox-reason`. Whether the call goes to an edge agent instead is decided
 * before this (`processor/edge-choice.ts`); a client route of `edge` reaching here means no
 * edge agent could take it.
 */
import { GatewayError } from "../../common/errors.ts";
import type { Provider } from "../providers/provider.ts";
import { fail, ok, type Result } from "../../common/result.ts";
import { edgeUnavailable, type ClientRoute, type RouteTarget } from "./route-header.ts";

export interface RouteDecision {
  /** A provider decision is always the cloud gear. */
  target: Extract<RouteTarget, "cloud">;
  provider: Provider;
  /** The model name the provider knows. */
  upstreamModel: string;
  reason: string;
}

/**
 * Model → provider: a provider that lists the model; else `provider/model` naming a provider;
 * else the default provider, which receives the model name unchanged.
 */
export function resolveProvider(model: string, providers: readonly Provider[]): Result<Omit<RouteDecision, "target">, GatewayError> {
  const listed = providers.find((p) => p.models.has(model) || p.aliases.has(model));
  if (listed) return ok({ provider: listed, upstreamModel: listed.aliases.get(model) ?? model, reason: `model_listed:${listed.name}` });
  const slash = model.indexOf("/");
  if (slash > 0) {
    const named = providers.find((p) => p.name === model.slice(0, slash));
    const rest = model.slice(slash + 1);
    if (named) return ok({ provider: named, upstreamModel: named.aliases.get(rest) ?? rest, reason: `provider_prefix:${named.name}` });
  }
  const fallback = providers.find((p) => p.isDefault);
  if (fallback) return ok({ provider: fallback, upstreamModel: fallback.aliases.get(model) ?? model, reason: `default_provider:${fallback.name}` });
  return fail(new GatewayError(404, "not_found_error", `No provider serves model '${model}'.`, { param: "model", code: "model_not_found" }));
}

export function decideRoute(model: string, route: ClientRoute, providers: readonly Provider[]): Result<RouteDecision, GatewayError> {
  switch (route) {
    case "edge":
      // The client forced the edge (data that must stay in) and no edge agent took the call:
      // refused rather than sent to a cloud.
      return fail(edgeUnavailable());
    case "auto":
    case "cloud": {
      const resolved = resolveProvider(model, providers);
      if (!resolved.ok) return resolved;
      return ok({ target: "cloud", ...resolved.value, reason: route === "cloud" ? `client_hint_cloud;${resolved.value.reason}` : resolved.value.reason });
    }
    default:
      return route satisfies never;
  }
}
