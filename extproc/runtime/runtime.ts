/**
 * A gateway's runtime: the snapshot requests start under, swapped atomically when the control
 * plane pushes a policy, and the routing state that outlives every snapshot. One per gateway,
 * shared by its ext_proc server and front door; requests already running keep the snapshot they
 * started with.
 */
import type { GatewayConfig } from "../config/load.ts";
import type { EdgeDirectory } from "../edge/agents.ts";
import type { ProviderHealth } from "../resilience/provider-health.ts";
import type { PolicyPlugin } from "../routing/policy/index.ts";
import type { Logger } from "../../common/telemetry/logger.ts";
import { createRoutingState, type RoutingState } from "./routing-state.ts";
import { createSnapshot, type RuntimeSnapshot } from "./snapshot.ts";

export interface RuntimeParts {
  plugins?: readonly PolicyPlugin[];
  /** The control plane's live edge agents; absent → the config's static `edge.agents`. */
  edgeAgents?: EdgeDirectory;
  /** One per process (breakers outlive reloads); absent → one made for this runtime. */
  providerHealth?: ProviderHealth;
  /** Absent → a fresh state. */
  state?: RoutingState;
  logger?: Logger;
}

export class Runtime {
  /** Stickiness, the cloud-latency window and the month's spend: a swap does not reset them. */
  readonly state: RoutingState;
  private snapshot: RuntimeSnapshot;
  private readonly parts: RuntimeParts;

  constructor(config: GatewayConfig, parts: RuntimeParts = {}) {
    this.parts = parts;
    this.state = parts.state ?? createRoutingState();
    // Online calibration's audit lines (threshold moves, failed shadow calls) go to the gateway's log.
    if (parts.logger) this.state.calibration.logger ??= parts.logger;
    this.snapshot = createSnapshot(config, parts);
  }

  /** The snapshot a request starting now runs under. */
  current(): RuntimeSnapshot {
    return this.snapshot;
  }

  /** Builds the snapshot of `config` (plugins: the current ones unless given) and swaps it in. */
  apply(config: GatewayConfig, plugins?: readonly PolicyPlugin[]): RuntimeSnapshot {
    const previous = this.snapshot;
    this.snapshot = createSnapshot(config, { ...this.parts, plugins: plugins ?? previous.plugins }, previous);
    return this.snapshot;
  }
}
