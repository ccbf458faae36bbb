/**
 * What the processor derives from a config, built once and shared by every request under that
 * config: the routing policy and the static edge-agent set. State that must outlive a config (a
 * policy pushed by the control plane is a new config) lives in `runtime-state.ts`, not here.
 */
import { EdgeAgents } from "../edge/agents.ts";
import type { GatewayConfig } from "../config/load.ts";
import { policyConfigFrom, type PolicyConfig } from "../routing/policy/index.ts";

/** The routing policy of a config, built once. */
const POLICIES = new WeakMap<GatewayConfig, PolicyConfig>();
export function policyFor(config: GatewayConfig): PolicyConfig {
  let policy = POLICIES.get(config);
  if (!policy) POLICIES.set(config, (policy = policyConfigFrom(config.route)));
  return policy;
}

/**
 * One edge-agent set per `edge:` section (its round-robin turn is shared by every request); a
 * pushed policy replaces `route:` only, so the set and its turn carry over.
 */
const EDGE_AGENTS = new WeakMap<GatewayConfig["edge"], EdgeAgents>();
export function edgeAgentsFor(config: GatewayConfig): EdgeAgents {
  let agents = EDGE_AGENTS.get(config.edge);
  if (!agents) EDGE_AGENTS.set(config.edge, (agents = new EdgeAgents(config.edge)));
  return agents;
}
