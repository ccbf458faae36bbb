/**
 * Which provider serves a model, and under which name: a pure function over the model and the
 * provider catalog, with the reason for `x-gearbox-reason`. The route decision (`route.ts`)
 * uses it for cloud calls; cascade upgrades and fallback chains resolve their models with it.
 */
import { GatewayError } from "../../common/errors.ts";
import type { Provider } from "../providers/provider.ts";
import { fail, ok, type Result } from "../../common/result.ts";

export interface ProviderRoute {
  provider: Provider;
  /** The model name the provider knows. */
  upstreamModel: string;
  reason: string;
}

/**
 * Model → provider: a provider that lists the model; else `provider/model` naming a provider;
 * else the default provider, which receives the model name unchanged.
 */
export function resolveProvider(model: string, providers: readonly Provider[]): Result<ProviderRoute, GatewayError> {
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
