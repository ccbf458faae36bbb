/**
 * What Gearbox's shadow configs (`envoy/shadow-*.yaml`) must guarantee, on the plain form of an
 * already proto-validated Bootstrap — above all that live traffic never depends on Gearbox:
 *
 * - observability mode: every ext_proc filter is `observability_mode` (send and go: "External
 *   processor should not send back processing response, as any responses will be ignored"),
 *   streams or skips bodies ("Only STREAMED body processing mode is supported"), fails open, and
 *   the routes reach provider clusters without any header Gearbox would set;
 * - mirroring: the live listener has no ext_proc; its provider routes mirror to a cluster that is
 *   a listener of this Envoy running Gearbox's blocking ext_proc (BUFFERED request body, fail
 *   open) in front of routes that all answer locally (`direct_response`), so a copy never
 *   reaches an upstream.
 */
import { checkCallerHeaderStrip, GEARBOX_REQUEST_ATTRIBUTES, UPSTREAM_HEADER } from "./gearbox-checks.ts";
import { arrayAt, isPlainObject, objectAt, stringAt, valueAtPath, type PlainObject } from "./plain.ts";

const EXT_PROC = "type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor";
const HCM = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";

interface Chain {
  hcm: PlainObject;
  path: string;
  port: number | undefined;
  extProc: PlainObject[];
  routes: { path: string; route: PlainObject }[];
}

function chainsOf(bootstrap: PlainObject): Chain[] {
  const chains: Chain[] = [];
  arrayAt(objectAt(bootstrap, "static_resources"), "listeners").forEach((listener, l) => {
    const port = valueAtPath(listener, "address.socket_address.port_value");
    arrayAt(listener, "filter_chains").forEach((fc, c) =>
      arrayAt(fc, "filters").forEach((filter, f) => {
        const hcm = objectAt(filter, "typed_config");
        if (hcm === undefined || hcm["@type"] !== HCM) return;
        const path = `static_resources.listeners[${l}].filter_chains[${c}].filters[${f}].typed_config`;
        const extProc = arrayAt(hcm, "http_filters").flatMap((h) => {
          const config = objectAt(h, "typed_config");
          return config?.["@type"] === EXT_PROC ? [config] : [];
        });
        const routes: Chain["routes"] = [];
        arrayAt(objectAt(hcm, "route_config"), "virtual_hosts").forEach((vh, v) =>
          arrayAt(vh, "routes").forEach((route, r) => {
            if (isPlainObject(route)) routes.push({ path: `${path}.route_config.virtual_hosts[${v}].routes[${r}]`, route });
          }),
        );
        chains.push({ hcm, path, port: typeof port === "number" ? port : undefined, extProc, routes });
      }),
    );
  });
  return chains;
}

function checkCommon(config: PlainObject, where: string, clusters: ReadonlyMap<string, PlainObject>, errors: string[]): void {
  const cluster = stringAt(valueAtPath(config, "grpc_service.envoy_grpc"), "cluster_name");
  if (cluster === undefined || !clusters.has(cluster)) errors.push(`${where}.grpc_service: needs an existing cluster, got ${JSON.stringify(cluster)}`);
  if (config["failure_mode_allow"] !== true) errors.push(`${where}.failure_mode_allow: shadowing must fail open (true)`);
  if (stringAt(objectAt(config, "processing_mode"), "request_header_mode") !== "SEND")
    errors.push(`${where}.processing_mode.request_header_mode: Gearbox needs SEND`);
  const attributes = arrayAt(config, "request_attributes");
  for (const name of GEARBOX_REQUEST_ATTRIBUTES) if (!attributes.includes(name)) errors.push(`${where}.request_attributes: Gearbox needs ${name}`);
}

/** A route's cluster, whether it needs Gearbox's routing header, and its mirrors. */
function routeTarget(route: PlainObject): { cluster: string | undefined; needsGearbox: boolean; mirrors: string[] } {
  const action = objectAt(route, "route");
  const needsGearbox = arrayAt(objectAt(route, "match"), "headers").some((h) => stringAt(h, "name") === UPSTREAM_HEADER);
  const mirrors = arrayAt(action, "request_mirror_policies").flatMap((m) => stringAt(m, "cluster") ?? []);
  return { cluster: stringAt(action, "cluster"), needsGearbox, mirrors };
}

/** Errors of a shadow config; empty when it is sound. */
export function checkShadowBootstrap(bootstrap: PlainObject): string[] {
  const errors: string[] = [];
  const clusters = new Map<string, PlainObject>();
  for (const cluster of arrayAt(objectAt(bootstrap, "static_resources"), "clusters")) {
    const name = stringAt(cluster, "name");
    if (name !== undefined && isPlainObject(cluster)) clusters.set(name, cluster);
  }
  const chains = chainsOf(bootstrap);
  const observing = chains.filter((c) => c.extProc.some((e) => e["observability_mode"] === true));
  const live = chains.filter((c) => c.extProc.length === 0 || observing.includes(c));
  if (live.length === 0) errors.push("static_resources.listeners: no listener serves live traffic without a blocking ext_proc");
  for (const chain of chains) {
    // Gearbox cannot strip a caller's routing headers when it only observes: the chain must.
    if (chain.extProc.length > 0) checkCallerHeaderStrip(chain.hcm, chain.path, errors);
    chain.extProc.forEach((config, i) => {
      const where = `${chain.path}.http_filters[ext_proc ${i}]`;
      checkCommon(config, where, clusters, errors);
      if (observing.includes(chain)) {
        if (config["observability_mode"] !== true) errors.push(`${where}.observability_mode: every ext_proc on the live path must be send-and-go`);
        const body = stringAt(objectAt(config, "processing_mode"), "request_body_mode");
        if (body !== "STREAMED" && body !== "NONE")
          errors.push(`${where}.processing_mode.request_body_mode: observability mode supports STREAMED (or NONE), got ${body ?? "the default"}`);
      } else if (stringAt(objectAt(config, "processing_mode"), "request_body_mode") !== "BUFFERED") {
        errors.push(`${where}.processing_mode.request_body_mode: the mirror's Gearbox decides on the whole body (BUFFERED)`);
      }
    });
  }
  const sinks = new Set(chains.filter((c) => c.extProc.length > 0 && !observing.includes(c)).map((c) => c.port));
  for (const chain of live) {
    for (const { path, route } of chain.routes) {
      const target = routeTarget(route);
      if (target.needsGearbox) errors.push(`${path}.match: a live route must not wait for ${UPSTREAM_HEADER} (Gearbox only observes)`);
      if (target.cluster !== undefined && !clusters.has(target.cluster)) errors.push(`${path}.route: cluster ${target.cluster} does not exist`);
      if (observing.includes(chain) || target.cluster === undefined) continue;
      if (target.mirrors.length === 0) errors.push(`${path}.route: mirrors to no Gearbox shadow listener`);
      for (const mirror of target.mirrors) {
        const port = valueAtPath(clusters.get(mirror), "load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value");
        if (typeof port !== "number" || !sinks.has(port))
          errors.push(`${path}.route.request_mirror_policies: ${mirror} is not a listener of this Envoy running Gearbox's ext_proc`);
      }
    }
  }
  for (const chain of chains.filter((c) => c.extProc.length > 0 && !observing.includes(c))) {
    for (const { path, route } of chain.routes) {
      if (objectAt(route, "direct_response") === undefined)
        errors.push(`${path}: a mirrored copy must be answered locally (direct_response), never sent upstream`);
    }
  }
  return errors;
}
