/**
 * What Gearbox relies on in an Envoy bootstrap, beyond "it parses": checked on the plain form
 * of an already proto-validated Bootstrap (`toPlainObject`, Any expanded to `@type` objects).
 *
 * - every cluster a route names exists; per-route filter configs name a filter of the chain;
 * - the ext_proc filter exists once, talks HTTP/2 to an existing cluster, uses the processing
 *   mode Gearbox is written for, fails closed, honours immediate responses and route clearing,
 *   and sends the request attributes that identify the caller;
 * - the router filter is last;
 * - a request on an LLM path with `x-gearbox-upstream: <u>` reaches cluster `<u>` with ext_proc
 *   on, with `:authority` rewritten to the TLS SNI for TLS clusters; without the header, or on
 *   any other path, it reaches no cluster at all;
 * - the `edge` cluster is ORIGINAL_DST taking the destination from the dynamic metadata
 *   `gearbox.edge/endpoint` (`metadata_key`, never `use_http_header`), the ext_proc filter accepts
 *   that namespace (`metadata_options.receiving_namespaces`), and the edge route is only taken
 *   when that metadata holds an `ip:port` / `[ip]:port`: ORIGINAL_DST falls back to the header and
 *   then to the connection's own destination, so without the guard a request that asks for the
 *   edge without a usable endpoint would go, in plain text, wherever the app dialled;
 * - the first HTTP filter removes the routing headers only Gearbox may set
 *   (`x-gearbox-upstream`, `x-gearbox-edge-endpoint`) from what callers send, before ext_proc;
 * - the edge route never retries (Gearbox's cascade upgrades a failed edge answer instead);
 * - a route to a cloud provider retries that provider once at most, only on what never reached
 *   it or on statuses a provider answers without billing (429, 5xx), never on a reset after the
 *   request was sent; it honours `retry-after`, and the cluster caps retries with a retry budget
 *   of at most 20 % (Envoy's layer of provider resilience; Gearbox's is the fallback chain).
 */
import { EDGE_ENDPOINT_METADATA } from "../../xds/resources/envoy.ts";
import { arrayAt, isPlainObject, objectAt, stringAt, valueAtPath, type PlainObject } from "./plain.ts";

/** Values of `x-gearbox-upstream` every config must route, each to the cluster of that name. */
export const GEARBOX_UPSTREAMS = ["openai", "anthropic", "gemini", "edge"] as const;
/** A value of {@link GEARBOX_UPSTREAMS}. */
export type GearboxUpstream = (typeof GEARBOX_UPSTREAMS)[number];
/** Request header Gearbox sets to pick the upstream. */
export const UPSTREAM_HEADER = "x-gearbox-upstream";
/** The former header for the edge agent's ip:port: callers may send it, nothing may route on it. */
export const EDGE_ENDPOINT_HEADER = "x-gearbox-edge-endpoint";
/** Headers the first filter must strip from callers' requests. */
export const CALLER_STRIPPED_HEADERS = [UPSTREAM_HEADER, EDGE_ENDPOINT_HEADER] as const;
/** Where ext_proc names the edge agent (see xds/resources/envoy.ts `EDGE_ENDPOINT_METADATA`). */
export const EDGE_METADATA = EDGE_ENDPOINT_METADATA;
/** Endpoint values the edge route must accept (Gearbox's agents, IPv4 and IPv6)… */
export const EDGE_ENDPOINTS_ACCEPTED = ["10.0.0.7:8088", "192.168.1.254:65535", "[fd00::7]:8088", "[2001:db8::1]:1"];
/** …and values it must refuse: ORIGINAL_DST cannot parse them and would fall back to the connection. */
export const EDGE_ENDPOINTS_REFUSED = ["", "api.openai.com:80", "10.0.0.7", "10.0.0.7:0", "10.0.0.7:65536", "300.0.0.1:80", "fd00::7:8088", "10.0.0.7:80 "];

const T = "type.googleapis.com/envoy.extensions.";
const HCM = `${T}filters.network.http_connection_manager.v3.HttpConnectionManager`;
const EXT_PROC = `${T}filters.http.ext_proc.v3.ExternalProcessor`;
const EXT_PROC_PER_ROUTE = `${T}filters.http.ext_proc.v3.ExtProcPerRoute`;
const ROUTER = `${T}filters.http.router.v3.Router`;
const HEADER_MUTATION = `${T}filters.http.header_mutation.v3.HeaderMutation`;
const UPSTREAM_TLS = `${T}transport_sockets.tls.v3.UpstreamTlsContext`;
const HTTP_OPTIONS_KEY = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions";

/** The processing mode Gearbox's processor is written for (see ARCHITECTURE.md). */
export const GEARBOX_PROCESSING_MODE: Readonly<Record<string, string>> = {
  request_header_mode: "SEND",
  response_header_mode: "SEND",
  request_body_mode: "BUFFERED",
  response_body_mode: "BUFFERED",
  request_trailer_mode: "SKIP",
  response_trailer_mode: "SKIP",
};

/**
 * `request_attributes` Gearbox reads (extproc/grpc/attributes.ts): the caller's `ip:port` and the
 * first URI SAN of its client certificate (its SPIFFE ID under mTLS).
 */
export const GEARBOX_REQUEST_ATTRIBUTES = ["source.address", "connection.uri_san_peer_certificate"] as const;

/**
 * Attribute names that look right but that Envoy never fills: its `source` map has only `address`
 * and `port`, and an attribute without a value is silently left out of the request.
 */
const NOT_ENVOY_ATTRIBUTES: Readonly<Record<string, string>> = {
  "source.principal": "connection.uri_san_peer_certificate",
};

/** One request each upstream must route, on a path of that provider's API. */
const SAMPLE_PATHS: Readonly<Record<GearboxUpstream, string>> = {
  openai: "/v1/chat/completions",
  anthropic: "/v1/messages",
  gemini: "/v1beta/models/gemini-2.0-flash:generateContent",
  edge: "/v1/chat/completions",
};

interface Request {
  readonly path: string;
  readonly headers: ReadonlyMap<string, string>;
  /** Dynamic metadata strings by `namespace/key`. */
  readonly metadata?: ReadonlyMap<string, string>;
}
interface Chain {
  readonly path: string;
  readonly hcm: PlainObject;
  readonly filterNames: readonly string[];
}

function typeOf(value: unknown): string | undefined {
  return stringAt(value, "@type");
}

/** Seconds in a plain Duration (`{ seconds: "2", nanos: 5e8 }`), or undefined when absent. */
function seconds(value: unknown): number | undefined {
  if (!isPlainObject(value)) return undefined;
  return Number(value["seconds"] ?? 0) + Number(value["nanos"] ?? 0) / 1e9;
}

function stringMatches(matcher: PlainObject, value: string | undefined): boolean | "unsupported" {
  if (value === undefined) return false;
  const exact = stringAt(matcher, "exact");
  if (exact !== undefined) return value === exact;
  const prefix = stringAt(matcher, "prefix");
  if (prefix !== undefined) return value.startsWith(prefix);
  const suffix = stringAt(matcher, "suffix");
  if (suffix !== undefined) return value.endsWith(suffix);
  const contains = stringAt(matcher, "contains");
  if (contains !== undefined) return value.includes(contains);
  const regex = stringAt(objectAt(matcher, "safe_regex"), "regex");
  if (regex !== undefined) return new RegExp(`^(?:${regex})$`).test(value);
  return "unsupported";
}

/**
 * `match.dynamic_metadata`: every MetadataMatcher must hold. Only one-key paths with a string
 * matcher are evaluated (what Gearbox's configs use).
 */
function metadataMatches(matchers: readonly unknown[], request: Request): boolean | "unsupported" {
  for (const m of matchers) {
    const path = arrayAt(m, "path");
    const key = stringAt(path[0], "key");
    const stringMatch = objectAt(objectAt(m, "value"), "string_match");
    if (path.length !== 1 || key === undefined || stringMatch === undefined || valueAtPath(m, "invert") === true) return "unsupported";
    const ok = stringMatches(stringMatch, request.metadata?.get(`${stringAt(m, "filter") ?? ""}/${key}`));
    if (ok !== true) return ok;
  }
  return true;
}

/** Whether `match` (a RouteMatch) selects `request`; "unsupported" for matchers this cannot evaluate. */
function routeMatches(match: PlainObject, request: Request): boolean | "unsupported" {
  let pathOk: boolean;
  const prefix = stringAt(match, "prefix");
  const exact = stringAt(match, "path");
  const regex = stringAt(objectAt(match, "safe_regex"), "regex");
  const separated = stringAt(match, "path_separated_prefix");
  if (prefix !== undefined) pathOk = request.path.startsWith(prefix);
  else if (exact !== undefined) pathOk = request.path === exact;
  else if (regex !== undefined) pathOk = new RegExp(`^(?:${regex})$`).test(request.path);
  else if (separated !== undefined) pathOk = request.path === separated || request.path.startsWith(`${separated}/`);
  else return "unsupported";
  if (!pathOk) return false;
  for (const header of arrayAt(match, "headers")) {
    const name = stringAt(header, "name") ?? "";
    const value = request.headers.get(name);
    const stringMatch = objectAt(header, "string_match");
    let ok: boolean | "unsupported";
    if (stringMatch !== undefined) ok = stringMatches(stringMatch, value);
    else if (valueAtPath(header, "present_match") === true) ok = value !== undefined;
    else ok = "unsupported";
    if (ok === "unsupported") return ok;
    if (ok === (valueAtPath(header, "invert_match") === true)) return false;
  }
  const metadata = metadataMatches(arrayAt(match, "dynamic_metadata"), request);
  if (metadata !== true) return metadata;
  return ["query_parameters", "grpc", "runtime_fraction", "tls_context"].some((k) => k in match) ? "unsupported" : true;
}

/** The cluster's envoy.extensions.upstreams.http.v3.HttpProtocolOptions, if any. */
function httpOptions(cluster: PlainObject): unknown {
  return objectAt(cluster, "typed_extension_protocol_options")?.[HTTP_OPTIONS_KEY];
}

function checkExtProc(filter: PlainObject, where: string, clusters: ReadonlyMap<string, PlainObject>, idle: number, errors: string[]): void {
  const config = objectAt(filter, "typed_config") ?? {};
  const clusterName = stringAt(valueAtPath(config, "grpc_service.envoy_grpc"), "cluster_name");
  const cluster = clusterName === undefined ? undefined : clusters.get(clusterName);
  if (cluster === undefined) {
    errors.push(`${where}.grpc_service: ext_proc must use envoy_grpc with an existing cluster, got ${JSON.stringify(clusterName)}`);
  } else if (!isPlainObject(valueAtPath(httpOptions(cluster), "explicit_http_config.http2_protocol_options"))) {
    errors.push(`${where}.grpc_service: cluster ${clusterName} must speak HTTP/2 (explicit_http_config.http2_protocol_options)`);
  }
  for (const [key, wanted] of Object.entries(GEARBOX_PROCESSING_MODE)) {
    const got = stringAt(objectAt(config, "processing_mode"), key);
    if (got !== wanted) errors.push(`${where}.processing_mode.${key}: Gearbox needs ${wanted}, got ${got ?? "the default"}`);
  }
  const flags: Readonly<Record<string, boolean>> = {
    allow_mode_override: true, // STREAMED responses for text/event-stream
    failure_mode_allow: false, // fail closed
    observability_mode: false, // Gearbox's responses must be applied
    disable_immediate_response: false, // cache hits and rejections are immediate responses
    disable_clear_route_cache: false, // routing follows x-gearbox-upstream after clear_route_cache
  };
  for (const [key, wanted] of Object.entries(flags)) {
    if ((config[key] === true) !== wanted) errors.push(`${where}.${key}: Gearbox needs ${wanted}`);
  }
  const attributes = arrayAt(config, "request_attributes");
  for (const name of GEARBOX_REQUEST_ATTRIBUTES) {
    if (!attributes.includes(name)) errors.push(`${where}.request_attributes: Gearbox needs ${name} to know the caller`);
  }
  for (const name of attributes) {
    const instead = typeof name === "string" ? NOT_ENVOY_ATTRIBUTES[name] : undefined;
    if (instead !== undefined) errors.push(`${where}.request_attributes: Envoy never sends ${String(name)}; use ${instead}`);
  }
  const receiving = arrayAt(valueAtPath(config, "metadata_options.receiving_namespaces"), "untyped");
  if (!receiving.includes(EDGE_METADATA.namespace)) {
    errors.push(`${where}.metadata_options.receiving_namespaces.untyped: must list ${EDGE_METADATA.namespace}, or Envoy drops the edge agent Gearbox names`);
  }
  if (config["route_cache_action"] === "RETAIN") errors.push(`${where}.route_cache_action: RETAIN would ignore Gearbox's clear_route_cache`);
  const timeout = seconds(config["message_timeout"]);
  const max = seconds(config["max_message_timeout"]) ?? 0;
  if (timeout === undefined || timeout <= 0.2) errors.push(`${where}.message_timeout: set it above Envoy's 200 ms default`);
  if (timeout !== undefined && max < timeout) errors.push(`${where}.max_message_timeout: must be >= message_timeout`);
  if (max >= idle) errors.push(`${where}.max_message_timeout: must stay below the stream idle timeout (${idle}s)`);
}

function checkRouting(chain: Chain, clusters: ReadonlyMap<string, PlainObject>, errors: string[]): void {
  const routes: { path: string; route: PlainObject }[] = [];
  arrayAt(objectAt(chain.hcm, "route_config"), "virtual_hosts").forEach((vh, v) =>
    arrayAt(vh, "routes").forEach((route, r) => {
      if (isPlainObject(route)) routes.push({ path: `${chain.path}.route_config.virtual_hosts[${v}].routes[${r}]`, route });
    }),
  );
  if (routes.length === 0) return void errors.push(`${chain.path}: needs an inline route_config with routes`);
  for (const { path, route } of routes) {
    const action = objectAt(route, "route");
    const named = [stringAt(action, "cluster"), ...arrayAt(objectAt(action, "weighted_clusters"), "clusters").map((c) => stringAt(c, "name"))];
    for (const name of named) if (name !== undefined && !clusters.has(name)) errors.push(`${path}.route: cluster ${name} does not exist`);
    if (action !== undefined && "cluster_header" in action) errors.push(`${path}.route: cluster_header cannot be checked statically`);
    for (const key of Object.keys(objectAt(route, "typed_per_filter_config") ?? {})) {
      if (!chain.filterNames.includes(key)) errors.push(`${path}.typed_per_filter_config: no http filter named ${key}`);
    }
  }
  const select = (request: Request): { path: string; route: PlainObject } | undefined => {
    for (const entry of routes) {
      const verdict = routeMatches(objectAt(entry.route, "match") ?? {}, request);
      if (verdict === "unsupported") return void errors.push(`${entry.path}.match: uses a matcher this check cannot evaluate`);
      if (verdict) return entry;
    }
    return undefined;
  };
  const edgeMetadata = (value: string): ReadonlyMap<string, string> => new Map([[`${EDGE_METADATA.namespace}/${EDGE_METADATA.key}`, value]]);
  for (const upstream of GEARBOX_UPSTREAMS) {
    const request = { path: SAMPLE_PATHS[upstream], headers: new Map([[UPSTREAM_HEADER, upstream]]), metadata: edgeMetadata(EDGE_ENDPOINTS_ACCEPTED[0] ?? "") };
    const hit = select(request);
    const action = objectAt(hit?.route, "route");
    const cluster = stringAt(action, "cluster");
    if (hit === undefined || cluster !== upstream) {
      const reached = cluster ?? "no cluster";
      errors.push(`${chain.path}.route_config: ${request.path} with ${UPSTREAM_HEADER}: ${upstream} must reach cluster ${upstream}, reaches ${reached}`);
      continue;
    }
    const perRoute = Object.values(objectAt(hit.route, "typed_per_filter_config") ?? {});
    if (perRoute.some((c) => typeOf(c) === EXT_PROC_PER_ROUTE && valueAtPath(c, "disabled") === true)) {
      errors.push(`${hit.path}: ext_proc is disabled on a route to ${upstream}`);
    }
    if (upstream !== "edge") checkProviderRetry(hit.path, action, clusters.get(upstream), upstream, errors);
    else if (Number(valueAtPath(objectAt(action, "retry_policy"), "num_retries.value") ?? (objectAt(action, "retry_policy") ? 1 : 0)) > 0) {
      // A failed edge answer goes back to Gearbox, whose cascade upgrades it to the cloud.
      errors.push(`${hit.path}.route.retry_policy: the edge route must not retry (Gearbox's cascade upgrades a failed edge answer)`);
    }
    const tls = valueAtPath(clusters.get(upstream), "transport_socket.typed_config");
    const sni = stringAt(tls, "sni");
    if (typeOf(tls) === UPSTREAM_TLS && stringAt(action, "host_rewrite_literal") !== sni) {
      errors.push(`${hit.path}.route.host_rewrite_literal: must be ${sni ?? "the cluster's SNI"} so :authority matches the TLS upstream`);
    }
  }
  for (const endpoint of EDGE_ENDPOINTS_ACCEPTED) {
    const hit = select({ path: SAMPLE_PATHS.edge, headers: new Map([[UPSTREAM_HEADER, "edge"]]), metadata: edgeMetadata(endpoint) });
    if (stringAt(objectAt(hit?.route, "route"), "cluster") !== "edge") {
      errors.push(`${chain.path}.route_config: the edge agent ${endpoint} named in dynamic metadata must reach cluster edge`);
    }
  }
  const edgeHeaders = new Map([
    [UPSTREAM_HEADER, "edge"],
    [EDGE_ENDPOINT_HEADER, "10.0.0.1:22"],
  ]);
  const unmediated: Request[] = [
    { path: "/v1/chat/completions", headers: new Map() },
    { path: "/internal/admin", headers: edgeHeaders },
    // The edge asked for without a usable endpoint in the metadata (a forged header, or no
    // metadata at all): ORIGINAL_DST would fall back to the connection's destination.
    { path: SAMPLE_PATHS.edge, headers: edgeHeaders },
    ...EDGE_ENDPOINTS_REFUSED.map((endpoint) => ({ path: SAMPLE_PATHS.edge, headers: edgeHeaders, metadata: edgeMetadata(endpoint) })),
  ];
  for (const request of unmediated) {
    const hit = select(request);
    if (hit !== undefined && objectAt(hit.route, "direct_response") === undefined) {
      const metadata = request.metadata === undefined ? "" : ` and metadata ${JSON.stringify([...request.metadata])}`;
      errors.push(
        `${hit.path}: ${request.path} with headers ${JSON.stringify([...request.headers])}${metadata} must get a direct response, not reach an upstream`,
      );
    }
  }
}

/** retry_on conditions that fire only when the request cannot have reached the provider. */
const RETRY_BEFORE_SENT = new Set(["connect-failure", "refused-stream", "reset-before-request"]);
/** Statuses a provider answers without doing (or billing) the work. */
const RETRIABLE_PROVIDER_STATUSES = new Set([429, 500, 502, 503, 504]);
/** The most retries of one provider Envoy may make before Gearbox's fallback chain takes over. */
const MAX_PROVIDER_RETRIES = 2;
/** Envoy's default retry budget (`budget_percent` 20 %), the most Gearbox allows. */
const MAX_RETRY_BUDGET_PERCENT = 20;

/** A provider route's retry policy and its cluster's retry budget (see the file comment). */
function checkProviderRetry(path: string, action: PlainObject | undefined, cluster: PlainObject | undefined, upstream: string, errors: string[]): void {
  const policy = objectAt(action, "retry_policy");
  if (policy === undefined) return void errors.push(`${path}.route.retry_policy: a route to ${upstream} needs one (connect failures, 429 and 5xx)`);
  const conditions = (stringAt(policy, "retry_on") ?? "")
    .split(",")
    .map((c) => c.trim())
    .filter((c) => c !== "");
  for (const c of conditions) {
    if (!RETRY_BEFORE_SENT.has(c) && c !== "retriable-status-codes")
      errors.push(`${path}.route.retry_policy.retry_on: '${c}' may retry a call the provider already started (and billed)`);
  }
  if (!conditions.includes("connect-failure")) errors.push(`${path}.route.retry_policy.retry_on: must retry connect-failure`);
  const statuses = arrayAt(policy, "retriable_status_codes").map(Number);
  if (!conditions.includes("retriable-status-codes") || !statuses.includes(429))
    errors.push(`${path}.route.retry_policy: must retry 429 (retry_on retriable-status-codes with 429 in retriable_status_codes)`);
  for (const s of statuses)
    if (!RETRIABLE_PROVIDER_STATUSES.has(s))
      errors.push(`${path}.route.retry_policy.retriable_status_codes: ${s} is not a status a provider answers without billing`);
  const retries = Number(valueAtPath(policy, "num_retries.value") ?? 1); // Envoy's default: 1
  if (retries > MAX_PROVIDER_RETRIES)
    errors.push(`${path}.route.retry_policy.num_retries: at most ${MAX_PROVIDER_RETRIES}; Gearbox's fallback chain takes over after that`);
  const resets = arrayAt(objectAt(policy, "rate_limited_retry_back_off"), "reset_headers");
  if (!resets.some((h) => stringAt(h, "name")?.toLowerCase() === "retry-after" && stringAt(h, "format") === "SECONDS")) {
    errors.push(`${path}.route.retry_policy.rate_limited_retry_back_off: must read retry-after (SECONDS)`);
  }
  const thresholds = arrayAt(objectAt(cluster, "circuit_breakers"), "thresholds");
  const budget = thresholds.map((t) => objectAt(t, "retry_budget")).find((b) => b !== undefined);
  const percent = Number(valueAtPath(budget, "budget_percent.value") ?? MAX_RETRY_BUDGET_PERCENT);
  if (budget === undefined) errors.push(`clusters[${upstream}].circuit_breakers: needs a retry_budget (at most ${MAX_RETRY_BUDGET_PERCENT} %)`);
  else if (percent > MAX_RETRY_BUDGET_PERCENT)
    errors.push(`clusters[${upstream}].circuit_breakers.retry_budget.budget_percent: at most ${MAX_RETRY_BUDGET_PERCENT}, is ${percent}`);
}

function checkEdgeCluster(cluster: PlainObject | undefined, errors: string[]): void {
  if (cluster === undefined) return; // reported by the routing check
  const lb = objectAt(cluster, "original_dst_lb_config");
  if (cluster["type"] !== "ORIGINAL_DST" || cluster["lb_policy"] !== "CLUSTER_PROVIDED") {
    errors.push("clusters[edge]: must be type ORIGINAL_DST with lb_policy CLUSTER_PROVIDED");
  }
  const key = objectAt(lb, "metadata_key");
  const path = arrayAt(key, "path").map((p) => stringAt(p, "key"));
  if (stringAt(key, "key") !== EDGE_METADATA.namespace || path.length !== 1 || path[0] !== EDGE_METADATA.key) {
    errors.push(
      `clusters[edge].original_dst_lb_config.metadata_key: must read ${EDGE_METADATA.namespace}/${EDGE_METADATA.key}, the dynamic metadata ext_proc sets`,
    );
  }
  if (lb?.["use_http_header"] === true) {
    errors.push("clusters[edge].original_dst_lb_config.use_http_header: a header callers can send must not pick the edge host");
  }
}

/**
 * The first HTTP filter is a header_mutation removing {@link CALLER_STRIPPED_HEADERS} from the
 * request, so ext_proc, a recomputed route and the upstream never see a caller's value.
 */
export function checkCallerHeaderStrip(hcm: PlainObject, where: string, errors: string[]): void {
  const first = objectAt(arrayAt(hcm, "http_filters")[0], "typed_config");
  const removed = arrayAt(objectAt(first, "mutations"), "request_mutations").map((m) => stringAt(m, "remove"));
  const missing = CALLER_STRIPPED_HEADERS.filter((h) => !removed.includes(h));
  if (typeOf(first) !== HEADER_MUTATION || missing.length > 0) {
    errors.push(
      `${where}.http_filters[0]: must be a header_mutation removing ${missing.join(", ") || CALLER_STRIPPED_HEADERS.join(", ")} from callers' requests, ahead of ext_proc`,
    );
  }
}

/** Gearbox's requirements on a plain Bootstrap; an empty list when all hold. */
export function checkGearboxBootstrap(bootstrap: PlainObject): string[] {
  const errors: string[] = [];
  const clusters = new Map<string, PlainObject>();
  for (const cluster of arrayAt(objectAt(bootstrap, "static_resources"), "clusters")) {
    const name = stringAt(cluster, "name");
    if (name !== undefined && isPlainObject(cluster)) clusters.set(name, cluster);
  }
  const chains: Chain[] = [];
  arrayAt(objectAt(bootstrap, "static_resources"), "listeners").forEach((listener, l) =>
    arrayAt(listener, "filter_chains").forEach((fc, c) =>
      arrayAt(fc, "filters").forEach((filter, f) => {
        const hcm = objectAt(filter, "typed_config");
        if (hcm === undefined || typeOf(hcm) !== HCM) return;
        const path = `static_resources.listeners[${l}].filter_chains[${c}].filters[${f}].typed_config`;
        chains.push({ path, hcm, filterNames: arrayAt(hcm, "http_filters").map((h) => stringAt(h, "name") ?? "") });
      }),
    ),
  );
  if (chains.length === 0) errors.push("static_resources.listeners: no HttpConnectionManager found");
  for (const chain of chains) {
    const filters = arrayAt(chain.hcm, "http_filters");
    const types = filters.map((h) => typeOf(objectAt(h, "typed_config")));
    if (types.at(-1) !== ROUTER || types.filter((t) => t === ROUTER).length !== 1) {
      errors.push(`${chain.path}.http_filters: the router filter must be last, and only there`);
    }
    const extProc = types.flatMap((t, i) => (t === EXT_PROC ? [i] : []));
    if (extProc.length !== 1) errors.push(`${chain.path}.http_filters: needs exactly one ext_proc filter, has ${extProc.length}`);
    const configuredIdle = seconds(chain.hcm["stream_idle_timeout"]);
    const idle = configuredIdle === undefined ? 300 : configuredIdle === 0 ? Infinity : configuredIdle; // Envoy: 5 min; 0 = off
    for (const i of extProc) checkExtProc(filters[i] as PlainObject, `${chain.path}.http_filters[${i}].typed_config`, clusters, idle, errors);
    checkCallerHeaderStrip(chain.hcm, chain.path, errors);
    checkRouting(chain, clusters, errors);
  }
  checkEdgeCluster(clusters.get("edge"), errors);
  return errors;
}
