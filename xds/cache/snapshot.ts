/**
 * An immutable, versioned set of xDS resources for one node group: resources per type URL,
 * keyed by resource name, each with its own version (a hash of its bytes, for delta xDS), and
 * a hash per type (so state of the world resends a type only when one of its resources changed).
 * Built only through `createSnapshot`, which decodes every resource and runs the consistency
 * check of go-control-plane's `Snapshot.Consistent`, reporting every problem at once:
 *
 * - every Cluster of type EDS has a ClusterLoadAssignment named after its
 *   `eds_cluster_config.service_name` (or, when unset, its own name);
 * - every RouteConfiguration a Listener's HttpConnectionManager names through `rds` exists;
 * - every resource decodes, has a name, and no name appears twice within its type.
 *
 * Extra resources nobody references are fine: a group may hold endpoints without clusters
 * (ext_proc replicas subscribe to the edge endpoints alone).
 */
import { createHash } from "node:crypto";
import { fail, ok, type Result } from "../../common/result.ts";
import { TYPE_URL_PREFIX, TYPE_URLS, unpackAny, type AnyMessage } from "../../common/control-plane/protos.ts";
import { nextVersion } from "./version.ts";

const HCM_TYPE_URL = `${TYPE_URL_PREFIX}envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager`;

/** Resources of one type, by name. */
export type ResourceMap = ReadonlyMap<string, AnyMessage>;

export interface Snapshot {
  /** Grows with every snapshot (see `version.ts`). */
  readonly version: string;
  /** Type URL → name → resource. */
  readonly resources: ReadonlyMap<string, ResourceMap>;
  /** Type URL → name → version of that one resource (a hash of its bytes). */
  readonly resourceVersions: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /** Type URL → a hash of all its resources: equal when none of that type changed. */
  readonly typeVersions: ReadonlyMap<string, string>;
}

type Decoded = ReadonlyMap<string, ReadonlyMap<string, Record<string, unknown>>>;

/** The field holding a resource's name, per type; `name` for types not listed. */
const NAME_FIELD: Readonly<Record<string, string>> = {
  [TYPE_URLS.endpoints]: "cluster_name",
  [TYPE_URLS.edgeAssignment]: "agent_id",
};

function resourceVersion(resource: AnyMessage): string {
  return createHash("sha256").update(resource.value).digest("hex").slice(0, 16);
}

function typeVersion(versions: ReadonlyMap<string, string>): string {
  const hash = createHash("sha256");
  for (const name of [...versions.keys()].sort()) hash.update(`${name}\0${versions.get(name) ?? ""}\0`);
  return hash.digest("hex").slice(0, 16);
}

function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Checks and freezes `resources` into a snapshot. `version` defaults to the next version of the
 * process clock; pass one only to re-create a known snapshot.
 */
export function createSnapshot(resources: Iterable<AnyMessage>, version: string = nextVersion()): Result<Snapshot> {
  const errors: string[] = [];
  const byType = new Map<string, Map<string, AnyMessage>>();
  const decoded = new Map<string, Map<string, Record<string, unknown>>>();
  let index = 0;
  for (const resource of resources) {
    const where = `resource #${index++} (${resource.type_url})`;
    let object: Record<string, unknown>;
    try {
      object = unpackAny(resource);
    } catch (err) {
      errors.push(`${where} does not decode: ${describeError(err)}`);
      continue;
    }
    const name = object[NAME_FIELD[resource.type_url] ?? "name"];
    if (typeof name !== "string" || name === "") {
      errors.push(`${where} has no name`);
      continue;
    }
    const named = byType.get(resource.type_url) ?? new Map<string, AnyMessage>();
    const objects = decoded.get(resource.type_url) ?? new Map<string, Record<string, unknown>>();
    if (named.has(name)) errors.push(`${where}: the name ${JSON.stringify(name)} is used twice`);
    named.set(name, resource);
    objects.set(name, object);
    byType.set(resource.type_url, named);
    decoded.set(resource.type_url, objects);
  }
  errors.push(...consistencyErrors(decoded));
  if (errors.length > 0) return fail(...errors);
  const resourceVersions = new Map<string, ReadonlyMap<string, string>>();
  const typeVersions = new Map<string, string>();
  for (const [typeUrl, named] of byType) {
    const versions = new Map([...named].map(([name, resource]) => [name, resourceVersion(resource)]));
    resourceVersions.set(typeUrl, versions);
    typeVersions.set(typeUrl, typeVersion(versions));
  }
  return ok(Object.freeze({ version, resources: byType, resourceVersions, typeVersions }));
}

/** The same resources under another version (the cache re-issues snapshots so versions only grow). */
export function withVersion(snapshot: Snapshot, version: string): Snapshot {
  return Object.freeze({ ...snapshot, version });
}

function consistencyErrors(decoded: Decoded): string[] {
  const errors: string[] = [];
  const assignments = decoded.get(TYPE_URLS.endpoints);
  for (const [name, cluster] of decoded.get(TYPE_URLS.cluster) ?? []) {
    if (cluster["type"] !== "EDS") continue;
    const edsConfig = cluster["eds_cluster_config"] as { service_name?: string } | undefined;
    const serviceName = edsConfig?.service_name || name;
    if (!assignments?.has(serviceName)) {
      errors.push(`Cluster ${JSON.stringify(name)} (EDS) needs the ClusterLoadAssignment ${JSON.stringify(serviceName)}, which the snapshot lacks`);
    }
  }
  const routes = decoded.get(TYPE_URLS.route);
  for (const [name, listener] of decoded.get(TYPE_URLS.listener) ?? []) {
    let routeNames: string[];
    try {
      routeNames = rdsNames(listener);
    } catch (err) {
      errors.push(`Listener ${JSON.stringify(name)}: its HttpConnectionManager does not decode: ${describeError(err)}`);
      continue;
    }
    for (const routeName of routeNames) {
      if (!routes?.has(routeName)) {
        errors.push(`Listener ${JSON.stringify(name)} needs the RouteConfiguration ${JSON.stringify(routeName)} (rds), which the snapshot lacks`);
      }
    }
  }
  return errors;
}

interface FilterChain {
  filters?: { typed_config?: AnyMessage }[];
}

/** Route configuration names the listener's HttpConnectionManagers fetch through RDS. */
function rdsNames(listener: Record<string, unknown>): string[] {
  const configs: (AnyMessage | undefined)[] = [(listener["api_listener"] as { api_listener?: AnyMessage } | undefined)?.api_listener];
  const chains = [...((listener["filter_chains"] as FilterChain[] | undefined) ?? []), listener["default_filter_chain"] as FilterChain | undefined];
  for (const chain of chains) for (const filter of chain?.filters ?? []) configs.push(filter.typed_config);
  const names: string[] = [];
  for (const config of configs) {
    if (config?.type_url !== HCM_TYPE_URL) continue;
    const rds = unpackAny(config)["rds"] as { route_config_name?: string } | undefined;
    if (rds?.route_config_name) names.push(rds.route_config_name);
  }
  return names;
}
