/**
 * The edge cluster in the rendered mesh install (issue 16 item 9), as checks returning errors.
 *
 * - No Gearbox ServiceEntry opens a port mesh-wide. Istio gives every sidecar (in the entry's
 *   exportTo scope, all namespaces by default) a `0.0.0.0_<port>` listener for each port of an
 *   entry without `addresses`: with `resolution: NONE` that listener catches every connection to
 *   the port, and an HTTP port other than 80 turns the port into HTTP for all of the mesh's
 *   traffic (an app's own protocol on it breaks; an IP Host matches no virtual host, black-holed
 *   under REGISTRY_ONLY). HTTP on 80 and TLS (matched by SNI, other traffic passes) add nothing.
 * - Every route's destination has a cluster. A registered host (ServiceEntry, Kubernetes
 *   Service) gets Istio's own; the edge host is registered nowhere: Istio still emits the route
 *   and names its cluster `outbound|<port>||<host>` (pilot route.GetDestinationCluster, called
 *   with no service: "a pre-defined statically configured cluster"; without an explicit port it
 *   takes the listener's), and an EnvoyFilter CLUSTER ADD in the same context must supply it.
 *   The edge cluster is ORIGINAL_DST on ext_proc's dynamic metadata, never on a header.
 */
import { EDGE_ENDPOINT_METADATA } from "../../xds/resources/envoy.ts";
import { parseEnvoyFilterPatches, type ParsedPatch } from "./envoy-patches.ts";
import { arr, obj, ofKind, type Manifest } from "./manifests.ts";

/** The host the provider VirtualServices' `gearbox-to-edge` route names; no service declares it. */
export const EDGE_HOST = "gearbox-edge.gearbox.internal";
/** Protocols Istio serves with an HTTP connection manager. */
const HTTP_PROTOCOLS = new Set(["HTTP", "HTTP2", "HTTP_PROXY", "GRPC", "GRPC-WEB"]);

const spec = (d: Manifest): Record<string, unknown> => obj(d["spec"]);
const where = (d: Manifest): string => `${d.kind} ${d.metadata.namespace ?? ""}/${d.metadata.name}`;

/** No ServiceEntry gives the mesh's sidecars a wildcard listener they would not have anyway. */
export function wildcardListenerErrors(docs: readonly Manifest[]): string[] {
  const errors: string[] = [];
  for (const se of ofKind(docs, "ServiceEntry")) {
    if (arr(spec(se)["addresses"]).length > 0) continue;
    for (const port of arr(spec(se)["ports"]).map(obj)) {
      const n = String(port["number"]);
      const protocol = (typeof port["protocol"] === "string" ? port["protocol"] : "TCP").toUpperCase();
      if (spec(se)["resolution"] === "NONE")
        errors.push(`${where(se)}: resolution NONE without addresses: every sidecar gets a 0.0.0.0_${n} listener catching all traffic to port ${n}`);
      else if (HTTP_PROTOCOLS.has(protocol) && n !== "80")
        errors.push(`${where(se)}: ${protocol} port ${n} without addresses: port ${n} becomes HTTP in every sidecar (0.0.0.0_${n})`);
      else if (!HTTP_PROTOCOLS.has(protocol) && protocol !== "TLS")
        errors.push(`${where(se)}: ${protocol} port ${n} without addresses: every sidecar sends all port-${n} traffic to this entry (0.0.0.0_${n})`);
    }
  }
  return errors;
}

/** Hosts Istio knows: ServiceEntry hosts and Kubernetes Service FQDNs. */
function registered(docs: readonly Manifest[], host: string): boolean {
  return ofKind(docs, "ServiceEntry").some((se) => arr(spec(se)["hosts"]).includes(host)) || /^[^.]+\.[^.]+\.svc\.cluster\.local$/.test(host);
}

/** Where a VirtualService's routes are built: sidecars for `mesh` (or no gateways), gateways otherwise. */
function contextsOf(vs: Manifest): string[] {
  const gateways = arr(spec(vs)["gateways"]).map(String);
  if (gateways.length === 0) return ["SIDECAR_OUTBOUND"];
  return [...new Set(gateways.map((g) => (g === "mesh" ? "SIDECAR_OUTBOUND" : "GATEWAY")))];
}

/** Clusters the EnvoyFilters add (CLUSTER ADD), with the context they are added in. */
function addedClusters(docs: readonly Manifest[]): Array<{ patch: ParsedPatch; name: string; context: string }> {
  return ofKind(docs, "EnvoyFilter").flatMap((filter) => {
    const raw = arr(obj(filter["spec"])["configPatches"]).map(obj);
    return parseEnvoyFilterPatches(filter).flatMap((patch, i) => {
      if (patch.applyTo !== "CLUSTER" || patch.operation !== "ADD") return [];
      const name = String(obj(obj(raw[i]?.["patch"])["value"])["name"]);
      return [{ patch, name, context: typeof patch.match["context"] === "string" ? patch.match["context"] : "ANY" }];
    });
  });
}

/** The edge cluster is added by an EnvoyFilter, named as its route's destination, ORIGINAL_DST on ext_proc's metadata. */
export function edgeClusterErrors(docs: readonly Manifest[]): string[] {
  const errors: string[] = [];
  const added = addedClusters(docs);
  for (const a of added) errors.push(...a.patch.errors);
  for (const se of ofKind(docs, "ServiceEntry")) {
    if (arr(spec(se)["hosts"]).includes(EDGE_HOST))
      errors.push(`${where(se)}: declares ${EDGE_HOST}: Istio builds the edge cluster from it (and the entry's listener), the EnvoyFilter must add it instead`);
  }
  let edgeRoutes = 0;
  for (const vs of ofKind(docs, "VirtualService")) {
    arr(spec(vs)["http"])
      .map(obj)
      .forEach((route, i) => {
        for (const dst of arr(route["route"]).map((r) => obj(obj(r)["destination"]))) {
          const host = String(dst["host"]);
          if (host === EDGE_HOST) edgeRoutes++;
          if (host !== EDGE_HOST && registered(docs, host)) continue;
          const at = `${where(vs)}: http[${i}] (${String(route["name"])}) → ${host}`;
          const port = obj(dst["port"])["number"];
          if (typeof port !== "number") {
            errors.push(`${at}: no port: Istio names the cluster after the listener's port, never the one an EnvoyFilter adds`);
            continue;
          }
          const name = `outbound|${String(port)}|${typeof dst["subset"] === "string" ? dst["subset"] : ""}|${host}`;
          for (const context of contextsOf(vs)) {
            const found = added.filter((a) => a.name === name && (a.context === context || a.context === "ANY"));
            if (found.length === 0) errors.push(`${at}: Istio names its cluster ${name}, and no EnvoyFilter adds it in ${context}: the route has no cluster`);
            if (found.length > 1) errors.push(`${at}: ${name} is added ${found.length} times in ${context}: Envoy rejects duplicate clusters`);
          }
        }
      });
  }
  if (edgeRoutes === 0) errors.push(`no VirtualService route goes to ${EDGE_HOST}`);
  for (const { patch, name } of added.filter((a) => a.name.endsWith(`||${EDGE_HOST}`))) {
    const c = patch.plain ?? {};
    if (c["type"] !== "ORIGINAL_DST" || c["lb_policy"] !== "CLUSTER_PROVIDED")
      errors.push(`${patch.where}: ${name} must be ORIGINAL_DST with lb_policy CLUSTER_PROVIDED (the agent is the ip:port ext_proc chose)`);
    const lb = obj(c["original_dst_lb_config"]);
    const key = { key: EDGE_ENDPOINT_METADATA.namespace, path: [{ key: EDGE_ENDPOINT_METADATA.key }] };
    if (JSON.stringify(lb["metadata_key"]) !== JSON.stringify(key))
      errors.push(`${patch.where}: ${name} must take its destination from metadata ${EDGE_ENDPOINT_METADATA.namespace}/${EDGE_ENDPOINT_METADATA.key}`);
    if (lb["use_http_header"] === true || lb["http_header_name"] !== undefined) errors.push(`${patch.where}: ${name} reads a header any caller can send`);
    if (c["transport_socket"] !== undefined) errors.push(`${patch.where}: ${name}: edge agents speak plain HTTP (outside the mesh)`);
  }
  return errors;
}
