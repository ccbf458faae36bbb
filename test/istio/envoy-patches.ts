/**
 * EnvoyFilter `patch.value`s parsed into Envoy's own proto types, with the strict checker of
 * test/envoy (unknown fields, wrong types, bad enums, validate.rules).
 *
 * An ADD or INSERT_* value is a whole message (a CLUSTER ADD a whole Cluster: Istio adds it as
 * written, unchecked) and is parsed as it is, strictly. A MERGE value is a part
 * of a message Istio generated, so it is merged (proto merge: messages field by field, repeated
 * fields appended) into a minimal message shaped like Istio's, and the result is parsed: the
 * patch's own fields are checked, and a MERGE that breaks the message shows as well. A REMOVE
 * carries no value (one that does is reported: Istio would ignore it).
 */
import { envoyRoot } from "../envoy/envoy-root.ts";
import { isPlainObject, type PlainObject } from "../envoy/plain.ts";
import { protoFromJson, toPlainObject } from "../envoy/proto-json.ts";
import { arr, obj, type Manifest } from "./manifests.ts";

/** Envoy message type of each `applyTo` Gearbox uses. */
export const PATCH_TYPES: Readonly<Record<string, string>> = {
  LISTENER: "envoy.config.listener.v3.Listener",
  FILTER_CHAIN: "envoy.config.listener.v3.FilterChain",
  HTTP_FILTER: "envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter",
  VIRTUAL_HOST: "envoy.config.route.v3.VirtualHost",
  HTTP_ROUTE: "envoy.config.route.v3.Route",
  CLUSTER: "envoy.config.cluster.v3.Cluster",
};

/** What Istio generates for each `applyTo`, at its smallest, for MERGE patches to land on. */
function istioSkeleton(applyTo: string, match: PlainObject): PlainObject {
  switch (applyTo) {
    case "LISTENER": {
      const port = Number(obj(match["listener"])["portNumber"] ?? 80);
      return { name: `0.0.0.0_${port}`, address: { socket_address: { address: "0.0.0.0", port_value: port } } };
    }
    case "VIRTUAL_HOST": {
      const vhost = obj(obj(match["routeConfiguration"])["vhost"])["name"];
      const name = typeof vhost === "string" ? vhost : "host:80";
      return { name, domains: [name.replace(/:\d+$/, "")] };
    }
    case "HTTP_ROUTE":
      return { match: { prefix: "/" }, route: { cluster: "outbound|80||placeholder" } };
    case "CLUSTER": {
      // A cluster Istio builds for a ServiceEntry or Service (DNS-resolved, its default timeout).
      const cluster = obj(match["cluster"]);
      return { name: `outbound|${String(cluster["portNumber"])}||${String(cluster["service"])}`, type: "STRICT_DNS", connect_timeout: "10s" };
    }
    default:
      return {};
  }
}

/** Proto merge of plain JSON: objects field by field, arrays appended, scalars replaced. */
export function protoMerge(base: unknown, patch: unknown): unknown {
  if (Array.isArray(base) && Array.isArray(patch)) return [...(base as unknown[]), ...(patch as unknown[])];
  if (isPlainObject(base) && isPlainObject(patch) && !("@type" in patch && base["@type"] !== patch["@type"])) {
    const out: PlainObject = { ...base };
    for (const [k, v] of Object.entries(patch)) out[k] = k in base ? protoMerge(base[k], v) : v;
    return out;
  }
  return patch;
}

export interface ParsedPatch {
  /** `configPatches[i] (applyTo)` for messages. */
  readonly where: string;
  readonly applyTo: string;
  readonly operation: string;
  readonly match: PlainObject;
  /** Parse errors; empty when the value is a valid message. */
  readonly errors: readonly string[];
  /** The parsed message (after the MERGE onto Istio's skeleton), in plain proto form. */
  readonly plain?: PlainObject;
}

/** Every config patch of an EnvoyFilter, parsed into its Envoy type. */
export function parseEnvoyFilterPatches(filter: Manifest): ParsedPatch[] {
  return arr(obj(filter["spec"])["configPatches"]).map((p, i) => {
    const patch = obj(p);
    const applyTo = String(patch["applyTo"]);
    const operation = String(obj(patch["patch"])["operation"]);
    const match = obj(patch["match"]);
    const where = `${filter.metadata.name}.configPatches[${i}] (${applyTo} ${operation})`;
    const typeName = PATCH_TYPES[applyTo];
    if (!typeName) return { where, applyTo, operation, match, errors: [`${where}: no Envoy type known for applyTo ${applyTo}`] };
    const value = obj(patch["patch"])["value"];
    if (operation === "REMOVE") return { where, applyTo, operation, match, errors: value === undefined ? [] : [`${where}: a REMOVE carries no value`] };
    const json = operation === "MERGE" ? protoMerge(istioSkeleton(applyTo, match), value) : value;
    const result = protoFromJson(envoyRoot(), typeName, json);
    if (!result.ok) return { where, applyTo, operation, match, errors: result.errors.map((e) => `${where}: ${e}`) };
    return { where, applyTo, operation, match, errors: [], plain: toPlainObject(result.type, result.message) };
  });
}
