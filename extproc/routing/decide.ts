/**
 * Route decision: which gear serves a call. A pure function over the call's model, the caller's
 * `x-gearbox-route` header and the provider catalog; it says why, for `x-gearbox-reason`.
 */
import { GatewayError, invalidRequest } from "../../common/errors.ts";
import type { Provider } from "../providers/provider.ts";
import { fail, ok, type Result } from "../../common/result.ts";

export type RouteTarget = "cloud";

export interface RouteDecision {
  target: RouteTarget;
  provider: Provider;
  /** The model name the provider knows. */
  upstreamModel: string;
  reason: string;
}

const ROUTE_HINTS = ["auto", "edge", "cloud"] as const;
type RouteHint = (typeof ROUTE_HINTS)[number];

export function parseRouteHint(value: string | undefined): Result<RouteHint, GatewayError> {
  if (value === undefined || value === "") return ok("auto");
  const hint = value.trim().toLowerCase();
  if ((ROUTE_HINTS as readonly string[]).includes(hint)) return ok(hint as RouteHint);
  return fail(invalidRequest(`Header 'x-gearbox-route' must be one of auto, edge, cloud; got '${value}'.`, "x-gearbox-route", "invalid_route_hint"));
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

export function decideRoute(model: string, routeHeader: string | undefined, providers: readonly Provider[]): Result<RouteDecision, GatewayError> {
  const hint = parseRouteHint(routeHeader);
  if (!hint.ok) return hint;
  switch (hint.value) {
    case "edge":
      // No edge agent is registered in this build of the pipeline; the caller asked for the
      // edge explicitly (data that must stay in), so it is refused rather than sent to a cloud.
      return fail(
        new GatewayError(503, "server_error", "No edge agent is available for this request; it was not sent to a cloud provider.", {
          code: "edge_unavailable",
          headers: { "retry-after": "5" },
        }),
      );
    case "auto":
    case "cloud": {
      const resolved = resolveProvider(model, providers);
      if (!resolved.ok) return resolved;
      return ok({ target: "cloud", ...resolved.value, reason: hint.value === "cloud" ? `client_hint_cloud;${resolved.value.reason}` : resolved.value.reason });
    }
    default:
      return hint.value satisfies never;
  }
}
