/**
 * The edge agents Gearbox can send low-gear requests to, and the pick for one request: an agent
 * that serves the model, on the caller's node when there is one, else the next in turn.
 * (Static from `edge.agents` until the control plane's registry feeds live agents.)
 */
import type { RawConfig } from "../config/schema.ts";

export interface EdgeAgentRef {
  /** `host:port`, what Envoy's ORIGINAL_DST cluster reads from `x-gearbox-edge-endpoint`. */
  address: string;
  models: ReadonlySet<string>;
  node?: string;
}

export class EdgeAgents {
  private turn = 0;
  private readonly agents: EdgeAgentRef[];

  constructor(config: RawConfig["edge"]) {
    this.agents = config.agents.map((a) => ({ address: a.address, models: new Set(a.models), ...(a.node !== undefined && { node: a.node }) }));
  }

  /** True when some agent serves `model`. */
  serves(model: string): boolean {
    return this.agents.some((a) => a.models.has(model));
  }

  pick(model: string, callerNode?: string): EdgeAgentRef | undefined {
    const candidates = this.agents.filter((a) => a.models.has(model));
    if (candidates.length === 0) return undefined;
    const local = callerNode === undefined ? undefined : candidates.find((a) => a.node === callerNode);
    if (local) return local;
    this.turn = (this.turn + 1) % candidates.length;
    return candidates[this.turn];
  }
}
