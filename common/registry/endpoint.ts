/**
 * One live edge agent as the registry publishes it (the control plane builds it from an agent's
 * hello and heartbeats; ext_proc reads it back from the endpoints it follows), and the
 * `ip:port` address form every side checks the same way.
 */
import { isIP } from "node:net";

/** One live edge agent, as the control plane publishes it and ext_proc reads it. */
export interface EdgeEndpoint {
  agentId: string;
  /** Kubernetes node (or device) the agent runs on. */
  node: string;
  /** `ip:port` (`[v6]:port`) of the agent's API. */
  address: string;
  models: readonly string[];
  inFlight: number;
  queued: number;
  maxConcurrent: number;
  maxQueue: number;
  healthy: boolean;
}

/** Splits `ip:port` / `[v6]:port`; undefined when it is not an IP literal with a port. */
export function parseEndpointAddress(address: string): { ip: string; port: number } | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(address);
  const ip = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  if (ip === undefined || isIP(ip) === 0 || !(port > 0 && port < 65536)) return undefined;
  if ((match?.[1] !== undefined) !== (isIP(ip) === 6)) return undefined;
  return { ip, port };
}
