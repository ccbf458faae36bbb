/**
 * State the processor keeps per config (built once, shared by every request under that config)
 * and per process: the routing policy, live routing signals, the static edge-agent set and this
 * month's cloud spend.
 */
import { EdgeAgents } from "../edge/agents.ts";
import type { GatewayConfig } from "../config/load.ts";
import { policyConfigFrom, type PolicyConfig } from "../routing/policy/index.ts";
import { CloudSpend, LatencyWindow, StickyTargets } from "../routing/signals.ts";

/** The routing policy of a config, built once. */
const POLICIES = new WeakMap<GatewayConfig, PolicyConfig>();
export function policyFor(config: GatewayConfig): PolicyConfig {
  let policy = POLICIES.get(config);
  if (!policy) POLICIES.set(config, (policy = policyConfigFrom(config.route)));
  return policy;
}

export interface RoutingSignals {
  sticky: StickyTargets;
  cloudLatency: LatencyWindow;
}

/** Per-config live routing signals: conversation stickiness and cloud latency. */
const SIGNALS = new WeakMap<GatewayConfig, RoutingSignals>();
export function signalsFor(config: GatewayConfig): RoutingSignals {
  let signals = SIGNALS.get(config);
  if (!signals) SIGNALS.set(config, (signals = { sticky: new StickyTargets(), cloudLatency: new LatencyWindow() }));
  return signals;
}

/** The process's cloud spend: a month's budget outlives config reloads. */
export const PROCESS_CLOUD_SPEND = new CloudSpend();

/** One edge-agent set per config (its round-robin turn is shared by every request). */
const EDGE_AGENTS = new WeakMap<GatewayConfig, EdgeAgents>();
export function edgeAgentsFor(config: GatewayConfig): EdgeAgents {
  let agents = EDGE_AGENTS.get(config);
  if (!agents) EDGE_AGENTS.set(config, (agents = new EdgeAgents(config.edge)));
  return agents;
}
