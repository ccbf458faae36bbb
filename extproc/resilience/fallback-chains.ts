/**
 * Fallback chains (`resilience.fallbacks`): for a client model (or `*`, every model without its
 * own chain), the models tried in order when its provider fails before any byte reached the
 * client. A member is a model as a request would name it (`claude-haiku-4-5`,
 * `deepseek/deepseek-chat`) and goes to the provider a request for it would go to; `edge`, last
 * only, is the edge agents' `edge.default_model`. Chains are not followed further (a member's own
 * chain is not used), so a chain that leads back to its model is a cycle and an error.
 */
import type { GatewayConfig } from "../config/load.ts";
import { priceOf, type Provider } from "../providers/provider.ts";
import { resolveProvider } from "../routing/provider-route.ts";

export type FallbackMember = { kind: "cloud"; model: string; provider: Provider; upstreamModel: string } | { kind: "edge"; model: string };

type Resolved = { ok: true; member: FallbackMember } | { ok: false; error: string };

/** One chain member → where it goes; the error says why not (without the field: the caller adds it). */
export function resolveMember(member: string, providers: readonly Provider[], edgeModel: string | undefined): Resolved {
  if (member === "edge")
    return edgeModel === undefined
      ? { ok: false, error: "'edge' needs edge.default_model (the model edge agents answer with)" }
      : { ok: true, member: { kind: "edge", model: edgeModel } };
  const listed = providers.some((p) => p.models.has(member) || p.aliases.has(member));
  const slash = member.indexOf("/");
  const prefixed = slash > 0 && providers.some((p) => p.name === member.slice(0, slash));
  if (!listed && slash > 0 && !prefixed)
    return { ok: false, error: `unknown provider '${member.slice(0, slash)}' (have ${providers.map((p) => p.name).join(", ")})` };
  const resolved = resolveProvider(member, providers);
  if (!resolved.ok) return { ok: false, error: `unknown model '${member}'` };
  const { provider, upstreamModel } = resolved.value;
  // A model only the default provider would get must at least be one it is known to serve (priced).
  if (!listed && !prefixed && !priceOf(provider, upstreamModel))
    return { ok: false, error: `unknown model '${member}': no provider lists it (add it to a provider's models, or write '<provider>/${member}')` };
  return { ok: true, member: { kind: "cloud", model: member, provider, upstreamModel } };
}

/** Where a model goes, as one name: `provider/upstream-model`, or `edge`. */
function identity(member: FallbackMember): string {
  return member.kind === "edge" ? "edge" : `${member.provider.name}/${member.upstreamModel}`;
}

function identityOfModel(model: string, providers: readonly Provider[]): string {
  const resolved = resolveProvider(model, providers);
  return resolved.ok ? `${resolved.value.provider.name}/${resolved.value.upstreamModel}` : model;
}

/** Start-up check of every chain: unknown providers and models, `edge` not last, duplicates, cycles. Each error names its field. */
export function checkFallbacks(
  fallbacks: Readonly<Record<string, readonly string[]>>,
  providers: readonly Provider[],
  edgeModel: string | undefined,
): string[] {
  const errors: string[] = [];
  /** identity of a keyed model → identities of its members. */
  const edges = new Map<string, string[]>();
  const keyed: { key: string; members: { index: number; id: string }[] }[] = [];
  for (const [key, chain] of Object.entries(fallbacks)) {
    const seen = new Set<string>();
    const members: { index: number; id: string }[] = [];
    chain.forEach((raw, index) => {
      const field = `resilience.fallbacks.${key}[${index}]`;
      const resolved = resolveMember(raw, providers, edgeModel);
      if (!resolved.ok) return void errors.push(`${field}: ${resolved.error}`);
      if (resolved.member.kind === "edge" && index !== chain.length - 1) errors.push(`${field}: 'edge' can only be the last member (the last resort)`);
      const id = identity(resolved.member);
      if (seen.has(id)) errors.push(`${field}: '${raw}' is already in this chain (${id})`);
      seen.add(id);
      members.push({ index, id });
    });
    if (key === "*") continue;
    const from = identityOfModel(key, providers);
    edges.set(from, [...(edges.get(from) ?? []), ...members.map((m) => m.id)]);
    keyed.push({ key, members });
  }
  for (const { key, members } of keyed) {
    const from = identityOfModel(key, providers);
    for (const { index, id } of members) {
      const path = pathTo(id, from, edges);
      if (path)
        errors.push(
          `resilience.fallbacks.${key}[${index}]: fallback cycle ${[from, ...path].join(" → ")} (chains are not followed further: list the whole chain under '${key}')`,
        );
    }
  }
  return errors;
}

/** The identities from `start` to `goal` along chain edges (both included), if `goal` is reachable. */
function pathTo(start: string, goal: string, edges: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const previous = new Map<string, string | null>([[start, null]]);
  const queue = [start];
  for (let node = queue.shift(); node !== undefined; node = queue.shift()) {
    if (node === goal) {
      const path: string[] = [];
      for (let at: string | null | undefined = node; at != null; at = previous.get(at)) path.unshift(at);
      return path;
    }
    for (const next of edges.get(node) ?? []) {
      if (previous.has(next)) continue;
      previous.set(next, node);
      queue.push(next);
    }
  }
  return undefined;
}

/**
 * The chain for a request for `model` that went (or would go) to `primary`: its own chain, else
 * `*`'s, without members that are the primary itself. Config checked at start: members resolve.
 */
export function chainFor(
  config: Pick<GatewayConfig, "resilience" | "providers" | "edge">,
  model: string,
  primary: { provider: Provider; upstreamModel: string },
): FallbackMember[] {
  const chain = config.resilience.fallbacks[model] ?? config.resilience.fallbacks["*"];
  if (!chain) return [];
  const self = `${primary.provider.name}/${primary.upstreamModel}`;
  const out: FallbackMember[] = [];
  for (const raw of chain) {
    const resolved = resolveMember(raw, config.providers, config.edge.default_model);
    if (resolved.ok && identity(resolved.member) !== self) out.push(resolved.member);
  }
  return out;
}
