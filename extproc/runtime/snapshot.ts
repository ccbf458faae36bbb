/**
 * What a request runs under: an immutable, versioned snapshot of the configuration and what is
 * derived from it once — the routing policy, the policy plugins, the edge-agent directory and
 * the providers' health. A request takes the current snapshot when it starts and keeps it to the
 * end; the control plane's push builds a new one and swaps it in whole (`runtime.ts`), as the
 * control plane does with its own snapshots (`xds/cache/snapshot.ts`).
 */
import type { GatewayConfig } from "../config/load.ts";
import { EdgeAgents, type EdgeDirectory } from "../edge/agents.ts";
import { ProviderHealth } from "../resilience/provider-health.ts";
import { policyConfigFrom, type PolicyConfig, type PolicyPlugin } from "../routing/policy/index.ts";
import type { Logger } from "../../common/telemetry/logger.ts";

export interface RuntimeSnapshot {
  /** 1 for the first snapshot of a runtime, then one more per swap. */
  readonly version: number;
  readonly config: GatewayConfig;
  /** `config.route` compiled for the decision. */
  readonly policy: PolicyConfig;
  /** Routing policy plugins named by `route.plugins`, loaded. */
  readonly plugins: readonly PolicyPlugin[];
  /** Where edge calls go: the control plane's live set when following one, else the config's `edge.agents`. */
  readonly edgeAgents: EdgeDirectory;
  /** Providers' breakers and retry budgets. */
  readonly providerHealth: ProviderHealth;
}

export interface SnapshotParts {
  plugins?: readonly PolicyPlugin[];
  /** The live edge directory (the control plane's); absent → a static one from `config.edge`. */
  edgeAgents?: EdgeDirectory;
  providerHealth?: ProviderHealth;
  logger?: Logger;
}

/**
 * The snapshot of `config`. With `previous`, what the new config did not change is carried
 * over: the static edge set while `config.edge` is the same section (its round-robin turn goes
 * on), the providers' health while `config.providers` is the same list.
 */
export function createSnapshot(config: GatewayConfig, parts: SnapshotParts = {}, previous?: RuntimeSnapshot): RuntimeSnapshot {
  const edgeAgents = parts.edgeAgents ?? (previous && previous.config.edge === config.edge ? previous.edgeAgents : undefined) ?? new EdgeAgents(config.edge);
  const providerHealth =
    parts.providerHealth ??
    (previous && previous.config.providers === config.providers ? previous.providerHealth : undefined) ??
    new ProviderHealth(config.resilience, parts.logger);
  return Object.freeze({
    version: (previous?.version ?? 0) + 1,
    config,
    policy: policyConfigFrom(config.route),
    plugins: Object.freeze([...(parts.plugins ?? previous?.plugins ?? [])]),
    edgeAgents,
    providerHealth,
  });
}
