/**
 * Bounded metric label values. A model name comes from the client, so it is a label only when the
 * config names it (a provider's models, aliases and prices, edge agents and assignments, the
 * edge and fallback models); anything else is `other`.
 */
import type { GatewayConfig } from "../config/load.ts";

export const OTHER = "other";
const known = new WeakMap<GatewayConfig, ReadonlySet<string>>();

function modelsOf(config: GatewayConfig): ReadonlySet<string> {
  const set = new Set<string>();
  for (const p of config.providers) {
    for (const m of p.models) set.add(m);
    for (const [alias, target] of p.aliases) set.add(alias).add(target);
    for (const m of p.pricing.keys()) set.add(m);
  }
  for (const a of config.edge.agents) for (const m of a.models) set.add(m);
  for (const a of config.edge.assignments) for (const m of a.models) set.add(m.id);
  if (config.edge.default_model !== undefined) set.add(config.edge.default_model);
  if (config.edge.fallback_model !== undefined) set.add(config.edge.fallback_model);
  return set;
}

/** `model` when the config names it, else `other`; `none` when there is no model. */
export function modelLabel(config: GatewayConfig, model: string | undefined): string {
  if (model === undefined) return "none";
  let set = known.get(config);
  if (!set) known.set(config, (set = modelsOf(config)));
  return set.has(model) ? model : OTHER;
}

/** The kind of an upgrade reason (`low_confidence:0.41<0.6` → `low_confidence`). */
export function reasonKind(reason: string | undefined): string {
  if (reason === undefined) return "unknown";
  const colon = reason.indexOf(":");
  return colon < 0 ? reason : reason.slice(0, colon);
}
