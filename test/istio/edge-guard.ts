/**
 * Where edge calls may go in the rendered mesh install (issue 16 item 3), as checks returning
 * errors: the edge route needs the dynamic metadata only ext_proc sets (ORIGINAL_DST otherwise
 * falls back to what the app dialled, in plain text), and every sidecar strips the routing
 * headers only Gearbox may set, ahead of ext_proc.
 */
import { EDGE_ENDPOINT_METADATA } from "../../xds/resources/envoy.ts";
import { CALLER_STRIPPED_HEADERS, EDGE_ENDPOINTS_ACCEPTED, EDGE_ENDPOINTS_REFUSED } from "../envoy/gearbox-checks.ts";
import { arrayAt, objectAt, stringAt, valueAtPath } from "../envoy/plain.ts";
import { parseEnvoyFilterPatches } from "./envoy-patches.ts";
import { arr, obj, ofKind, type Manifest } from "./manifests.ts";

const HEADER_MUTATION = "type.googleapis.com/envoy.extensions.filters.http.header_mutation.v3.HeaderMutation";

/** The regex the HTTP_ROUTE patch of `gearbox-to-edge` requires of gearbox.edge/endpoint, if any. */
function guardRegex(docs: readonly Manifest[]): string | undefined {
  for (const filter of ofKind(docs, "EnvoyFilter")) {
    for (const patch of parseEnvoyFilterPatches(filter)) {
      const route = valueAtPath(patch.match, "routeConfiguration.vhost.route.name");
      if (patch.applyTo !== "HTTP_ROUTE" || route !== "gearbox-to-edge") continue;
      for (const m of arrayAt(objectAt(patch.plain, "match"), "dynamic_metadata")) {
        const key = stringAt(arrayAt(m, "path")[0], "key");
        if (stringAt(m, "filter") !== EDGE_ENDPOINT_METADATA.namespace || key !== EDGE_ENDPOINT_METADATA.key) continue;
        const regex = stringAt(valueAtPath(m, "value.string_match.safe_regex"), "regex");
        if (regex !== undefined) return regex;
      }
    }
  }
  return undefined;
}

/** The edge route of every provider VirtualService is guarded on an ip:port in the edge metadata. */
export function edgeRouteGuardErrors(docs: readonly Manifest[]): string[] {
  const edgeRoutes = ofKind(docs, "VirtualService").flatMap((vs) =>
    arr(obj(vs["spec"])["http"])
      .map(obj)
      .filter((r) => r["name"] === "gearbox-to-edge"),
  );
  if (edgeRoutes.length === 0) return [];
  const regex = guardRegex(docs);
  if (regex === undefined) {
    return [
      `route gearbox-to-edge: no EnvoyFilter requires ${EDGE_ENDPOINT_METADATA.namespace}/${EDGE_ENDPOINT_METADATA.key}; x-gearbox-upstream: edge alone sends the call wherever ORIGINAL_DST falls back (what the app dialled)`,
    ];
  }
  const full = new RegExp(`^(?:${regex})$`);
  return [
    ...EDGE_ENDPOINTS_ACCEPTED.filter((e) => !full.test(e)).map((e) => `route gearbox-to-edge: the guard refuses the agent ${e}`),
    ...EDGE_ENDPOINTS_REFUSED.filter((e) => full.test(e)).map(
      (e) => `route gearbox-to-edge: the guard lets ${JSON.stringify(e)} through, which ORIGINAL_DST cannot parse (it would fall back to the connection)`,
    ),
  ];
}

/** A mesh-wide EnvoyFilter strips the routing headers as the first HTTP filter of port 80 in every sidecar. */
export function headerStripErrors(docs: readonly Manifest[]): string[] {
  const strips = ofKind(docs, "EnvoyFilter").filter((f) => {
    if (f.metadata.namespace !== "istio-system" || obj(f["spec"])["workloadSelector"] !== undefined) return false;
    return parseEnvoyFilterPatches(f).some((p) => {
      const removed = arrayAt(valueAtPath(p.plain, "typed_config.mutations"), "request_mutations").map((m) => stringAt(m, "remove"));
      return (
        p.applyTo === "HTTP_FILTER" &&
        p.operation === "INSERT_FIRST" &&
        p.match["context"] === "SIDECAR_OUTBOUND" &&
        valueAtPath(p.match, "listener.portNumber") === 80 &&
        stringAt(objectAt(p.plain, "typed_config"), "@type") === HEADER_MUTATION &&
        CALLER_STRIPPED_HEADERS.every((h) => removed.includes(h))
      );
    });
  });
  return strips.length > 0
    ? []
    : [`no mesh-wide EnvoyFilter (istio-system, no workloadSelector) removes ${CALLER_STRIPPED_HEADERS.join(", ")} first on port 80 of every sidecar`];
}
