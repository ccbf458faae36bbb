/**
 * The edge agents Gearbox can send low-gear requests to, and the pick for one request.
 *
 * - `EdgeAgents`: static, from `edge.agents` in the config (no control plane): an agent that
 *   serves the model, on the caller's node when there is one, else the next in turn.
 * - `LiveEdgeAgents`: fed by the control plane (the `gearbox-edge` endpoints over ADS, with each
 *   agent's models and load): a healthy agent that serves the model, on the caller's node when
 *   one is there, else the least loaded (in flight + queued, per unit of capacity), ties taking
 *   turns. An update replaces the whole set; requests already routed keep their agent.
 *   Static agents (`edge.agents`, given to the constructor) stay known beside the live ones
 *   until the control plane registers an agent at the same address (the live entry wins): they
 *   report no load, so a live agent with the model is preferred and a static one is picked only
 *   when no live one serves it (on the caller's node first, as for live agents).
 */
import type { EdgeEndpoint } from "../../common/registry/endpoint.ts";
import type { RawConfig } from "../config/schema.ts";

export interface EdgeAgentRef {
  /** `host:port`, what Envoy's ORIGINAL_DST cluster reads from `x-gearbox-edge-endpoint`. */
  address: string;
  models: ReadonlySet<string>;
  node?: string;
}

/** What the processor asks of an edge-agent set. */
export interface EdgeDirectory {
  /** True when some agent serves `model`. */
  serves(model: string): boolean;
  pick(model: string, callerNode?: string): EdgeAgentRef | undefined;
}

export class EdgeAgents implements EdgeDirectory {
  private turn = 0;
  private readonly agents: EdgeAgentRef[];

  constructor(config: RawConfig["edge"]) {
    this.agents = config.agents.map((a) => ({ address: a.address, models: new Set(a.models), ...(a.node !== undefined && { node: a.node }) }));
  }

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

/** One live agent as the control plane reports it (the `gearbox-edge` endpoints). */
export type LiveEdgeAgent = EdgeEndpoint;

interface Entry extends EdgeAgentRef {
  node: string;
  load: number;
}

/** A static agent's load: unknown, so it ranks after every live agent that reports one. */
const UNKNOWN_LOAD = Number.POSITIVE_INFINITY;

export class LiveEdgeAgents implements EdgeDirectory {
  private byModel = new Map<string, Entry[]>();
  private turn = 0;
  private count = 0;
  private readonly statics: readonly Entry[];

  /** `statics`: the config's `edge.agents`, known until the control plane registers their address. */
  constructor(statics: RawConfig["edge"]["agents"] = []) {
    this.statics = statics.map((a) => ({ address: a.address, node: a.node ?? "", models: new Set(a.models), load: UNKNOWN_LOAD }));
    this.update([]);
  }

  /** Replaces the live set (a new ADS update). Unhealthy agents and agents without an address are left out. */
  update(agents: readonly LiveEdgeAgent[]): void {
    const byModel = new Map<string, Entry[]>();
    const add = (entry: Entry): void => {
      for (const model of entry.models) {
        let list = byModel.get(model);
        if (!list) byModel.set(model, (list = []));
        list.push(entry);
      }
    };
    let count = 0;
    // Every address the control plane reports, healthy or not, overrides a static agent there.
    const registered = new Set(agents.map((a) => a.address));
    for (const a of agents) {
      if (!a.healthy || a.address === "") continue;
      count++;
      add({ address: a.address, node: a.node, models: new Set(a.models), load: (a.inFlight + a.queued) / Math.max(1, a.maxConcurrent) });
    }
    for (const s of this.statics) {
      if (registered.has(s.address)) continue;
      count++;
      add(s);
    }
    this.byModel = byModel;
    this.count = count;
  }

  get size(): number {
    return this.count;
  }

  serves(model: string): boolean {
    return this.byModel.has(model);
  }

  pick(model: string, callerNode?: string): EdgeAgentRef | undefined {
    const candidates = this.byModel.get(model);
    if (!candidates || candidates.length === 0) return undefined;
    const pool = callerNode === undefined ? candidates : candidates.filter((a) => a.node === callerNode);
    const from = pool.length > 0 ? pool : candidates;
    let least = Infinity;
    for (const a of from) if (a.load < least) least = a.load;
    const best = from.filter((a) => a.load === least);
    this.turn = (this.turn + 1) % best.length;
    return best[this.turn];
  }
}
