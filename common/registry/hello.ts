/**
 * Validation of what an agent reports: its hello (identity, address, models, capacity) and the
 * model lists of its heartbeats. Returns a result naming each bad field; the service turns the
 * errors into one INVALID_ARGUMENT status.
 */
import { fail, ok, type Result } from "../result.ts";
import { parseEndpointAddress } from "./endpoint.ts";
import type { HelloMessage, LoadedModelMessage } from "./wire.ts";

/** A model an agent holds. */
export interface AgentModel {
  readonly id: string;
  readonly engine: string;
}

/** How much work an agent takes at once (per model). */
export interface AgentCapacity {
  readonly maxConcurrent: number;
  readonly maxQueue: number;
}

/** A valid hello. */
export interface AgentHello {
  agentId: string;
  node: string;
  /** `ip:port` (IPv6 in brackets). */
  address: string;
  models: readonly AgentModel[];
  capacity: AgentCapacity;
  /** "" when the agent never acknowledged an assignment. */
  ackedVersion: string;
  labels: Readonly<Record<string, string>>;
}

const MAX_ID_LENGTH = 253;
/** Printable, no spaces: ids show up in logs, metadata and resource names. */
const ID_PATTERN = /^[\x21-\x7e]+$/;

function checkId(field: string, value: string | undefined, errors: string[]): string {
  if (!value) errors.push(`hello.${field} is required`);
  else if (value.length > MAX_ID_LENGTH || !ID_PATTERN.test(value))
    errors.push(`hello.${field} must be 1-${MAX_ID_LENGTH} printable characters without spaces, got '${value}'`);
  return value ?? "";
}

/** Why Envoy could not dial `address` as given (`ip:port`, IPv6 as `[ip]:port`), or undefined when it can. */
export function addressError(address: string): string | undefined {
  const parsed = parseEndpointAddress(address);
  if (!parsed) {
    const shape = /^(?:\[([^\]]+)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(address);
    const port = Number(shape?.[3]);
    return shape && port >= 1 && port <= 65535
      ? `'${address}' does not start with an IP address (Envoy dials it without DNS)`
      : `'${address}' is not ip:port (IPv6 as [ip]:port)`;
  }
  if (parsed.ip === "0.0.0.0" || parsed.ip === "::") return `'${address}' is the unspecified address; give one other hosts can dial (the pod IP)`;
  return undefined;
}

/** A model list as reported, sorted by id; models without an id are errors. */
function parseModels(field: string, models: readonly LoadedModelMessage[] | undefined, errors: string[]): AgentModel[] {
  const out: AgentModel[] = [];
  for (const [i, m] of (models ?? []).entries()) {
    if (!m.id) errors.push(`${field}[${i}].id is required`);
    else out.push({ id: m.id, engine: m.engine ?? "" });
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export function parseHello(hello: HelloMessage | undefined): Result<AgentHello> {
  if (!hello) return fail("hello is empty");
  const errors: string[] = [];
  const agentId = checkId("agent_id", hello.agent_id, errors);
  const node = checkId("node", hello.node, errors);
  const address = hello.address ?? "";
  const bad = address ? addressError(address) : undefined;
  if (!address) errors.push("hello.address is required");
  else if (bad) errors.push(`hello.address: ${bad}`);
  const models = parseModels("hello.models", hello.models, errors);
  for (const key of Object.keys(hello.labels ?? {})) if (key === "") errors.push("hello.labels has an empty key");
  if (errors.length > 0) return { ok: false, errors };
  return ok({
    agentId,
    node,
    address,
    models,
    capacity: { maxConcurrent: hello.capacity?.max_concurrent ?? 0, maxQueue: hello.capacity?.max_queue ?? 0 },
    ackedVersion: hello.acked_version ?? "",
    labels: { ...hello.labels },
  });
}

/** The models of a heartbeat. */
export function parseHeartbeatModels(models: readonly LoadedModelMessage[] | undefined): Result<AgentModel[]> {
  const errors: string[] = [];
  const out = parseModels("heartbeat.models", models, errors);
  return errors.length > 0 ? { ok: false, errors } : ok(out);
}
