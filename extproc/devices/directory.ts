/**
 * One device seen by the route decision as an edge directory: it "serves" the models it has
 * loaded that its tenant may use, and the pick is always the device itself. With it (and the
 * device's active model as `edge.default_model`), `decideRoute` decides a device's call with the
 * same rules, policy and reasons as a call an edge agent could take: a device is an edge agent the
 * gateway does not call itself.
 */
import type { EdgeAgentRef, EdgeDirectory } from "../edge/agents.ts";
import type { RuntimeSnapshot } from "../runtime/snapshot.ts";

/** The address a device's answers carry in the request log (`cascade.edge_agent`). */
export const deviceAddress = (tenant: string, deviceId: string): string => `device:${tenant}/${deviceId}`;

export class DeviceDirectory implements EdgeDirectory {
  private readonly ref: EdgeAgentRef;

  constructor(address: string, models: Iterable<string>) {
    this.ref = { address, models: new Set(models) };
  }

  serves(model: string): boolean {
    return this.ref.models.has(model);
  }

  pick(model: string): EdgeAgentRef | undefined {
    return this.ref.models.has(model) ? this.ref : undefined;
  }
}

/**
 * The snapshot a device's decision runs under: the gateway's, with the device as the only edge
 * agent and its active model as the edge model (none → no edge: every call goes to the cloud).
 */
export function deviceSnapshot(snapshot: RuntimeSnapshot, directory: DeviceDirectory, active: string | undefined): RuntimeSnapshot {
  const edge = { ...snapshot.config.edge, agents: [], default_model: active !== undefined && directory.serves(active) ? active : undefined };
  return Object.freeze({ ...snapshot, edgeAgents: directory, config: { ...snapshot.config, edge } });
}
