/**
 * Options of the Envoy stand-in (`startEnvoy`) and their resolution to Envoy's defaults.
 *
 * Field names follow Envoy's protos where there is one: the ext_proc filter
 * (`envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor`), its `ProcessingMode`, the
 * `HeaderMutationRules` of `envoy.config.common.mutation_rules.v3`, the route table and clusters.
 */
import type { DownstreamTlsOptions, UpstreamTlsOptions } from "./tls.ts";
import type { ProcessingMode } from "../../proto/generated/envoy/extensions/filters/http/ext_proc/v3/ProcessingMode.ts";
import { checkRequestAttributes } from "./attributes.ts";

/** `ProcessingMode.HeaderSendMode` by name. */
export type HeaderSendMode = "DEFAULT" | "SEND" | "SKIP";
/** `ProcessingMode.BodySendMode` by name (FULL_DUPLEX_STREAMED is not supported by the harness). */
export type BodySendMode = "NONE" | "STREAMED" | "BUFFERED" | "BUFFERED_PARTIAL";

/** A processing mode with every field resolved to a name. */
export interface ResolvedProcessingMode {
  request_header_mode: HeaderSendMode;
  response_header_mode: HeaderSendMode;
  request_body_mode: BodySendMode;
  response_body_mode: BodySendMode;
  request_trailer_mode: HeaderSendMode;
  response_trailer_mode: HeaderSendMode;
}

/**
 * `envoy.config.common.mutation_rules.v3.HeaderMutationRules`, with the BoolValue wrappers as plain
 * booleans and the two RegexMatchers as regular-expression sources (matched against the whole
 * lower-cased header name, as RE2 full matches are).
 */
export interface HeaderMutationRules {
  allow_all_routing?: boolean;
  allow_envoy?: boolean;
  disallow_system?: boolean;
  disallow_all?: boolean;
  allow_expression?: string;
  disallow_expression?: string;
  disallow_is_error?: boolean;
}

/** The ext_proc filter's configuration (a subset of `ExternalProcessor`). */
export interface ExtProcOptions {
  /** `grpc_service`: host:port of the ExternalProcessor server (plaintext). */
  address: string;
  /** `processing_mode`; unset fields take Envoy's defaults SEND/SEND/NONE/NONE/SKIP/SKIP. */
  processingMode?: ProcessingMode;
  /** `message_timeout` in ms (Envoy default 200). */
  messageTimeoutMs?: number;
  /** `max_message_timeout` in ms (default 0: `override_message_timeout` is ignored). */
  maxMessageTimeoutMs?: number;
  /** `failure_mode_allow` (default false). */
  failureModeAllow?: boolean;
  /** `allow_mode_override` (default false). */
  allowModeOverride?: boolean;
  /** `mutation_rules` (default: everything allowed except routing and x-envoy headers). */
  mutationRules?: HeaderMutationRules;
  /** `observability_mode` (default false): send and go, responses ignored. */
  observabilityMode?: boolean;
  /** `status_on_error`: status of the local reply on a stream error or bad response (default 500). */
  statusOnError?: number;
  /** `deferred_close_timeout` in ms for observability mode (Envoy default 5000). */
  deferredCloseTimeoutMs?: number;
  /**
   * `request_attributes` (default none): attribute names whose values go with the first request
   * message; see `attributes.ts` for the ones the harness evaluates.
   */
  requestAttributes?: string[];
  /**
   * `metadata_options.receiving_namespaces.untyped` (default none): the namespaces of a response's
   * `dynamic_metadata` Envoy writes into the stream's dynamic metadata; others are dropped.
   */
  receivingNamespaces?: string[];
}

/**
 * `match.dynamic_metadata[0]`: a `MetadataMatcher` whose `filter` is the namespace, `path` one key,
 * and `value.string_match.safe_regex` the regular expression (RE2 full match).
 */
export interface DynamicMetadataMatch {
  filter: string;
  key: string;
  regex: string;
}

/** One route of the virtual host, matched in order (Envoy `config.route.v3.Route`, minimal). */
export interface RouteOptions {
  /** `match.headers[0].name`; with `value`, the header must equal it exactly. Omit to match all. */
  header?: string;
  /** `match.headers[0].string_match.exact`. */
  value?: string;
  /** `match.prefix` (default "/"). */
  prefix?: string;
  /** `match.dynamic_metadata`: the stream's dynamic metadata must hold a matching string. */
  dynamicMetadata?: DynamicMetadataMatch;
  /** `route.cluster`; absent with `directResponse`. */
  cluster?: string;
  /** `direct_response`: the router answers itself (response code details `direct_response`). */
  directResponse?: { status: number; body: string };
  /** `route.host_rewrite_literal`. */
  hostRewrite?: string;
  /** `route.prefix_rewrite`: replaces the matched `prefix` of `:path`. */
  prefixRewrite?: string;
  /** `route.retry_policy` (default: no retries). */
  retryPolicy?: RetryPolicyOptions;
  /**
   * `request_headers_to_remove` of the route: taken off the request once the route is chosen,
   * before it goes upstream (Envoy's `RouteEntryImplBase::finalizeRequestHeaders`, config_impl.cc).
   */
  requestHeadersToRemove?: string[];
  /**
   * `route.timeout` in ms, over the harness-wide `routeTimeoutMs`; 0 disables it, as Envoy's
   * route.proto says ("A value of 0 will disable the route's timeout"; Gearbox's routes to
   * providers and edge agents set `timeout: 0s`).
   */
  timeoutMs?: number;
}

/**
 * `config.route.v3.RetryPolicy`, the part Gearbox's configs use. Durations in ms. The harness
 * retries as Envoy's router does (`source/common/router/retry_state_impl.cc`): before any
 * response header goes to the filters, on the listed conditions, within `num_retries` and the
 * cluster's retry budget, after a jittered back-off or a rate-limited one read from a reset header.
 */
export interface RetryPolicyOptions {
  /** `retry_on`, comma-separated: `connect-failure`, `refused-stream`, `reset-before-request`, `reset`, `retriable-status-codes`, `5xx`, `gateway-error`. */
  retry_on: string;
  /** `num_retries` (Envoy default 1). */
  num_retries?: number;
  /** `retriable_status_codes`. */
  retriable_status_codes?: number[];
  /** `retry_back_off` (Envoy default base 25 ms, max 10 × base). */
  retry_back_off?: { base_interval_ms: number; max_interval_ms?: number };
  /** `rate_limited_retry_back_off` with SECONDS reset headers only. */
  rate_limited_retry_back_off?: { reset_headers: string[]; max_interval_ms?: number };
}

/** `circuit_breakers.thresholds[].retry_budget` of a cluster (Envoy defaults: 20 %, 3). */
export interface RetryBudgetOptions {
  budget_percent?: number;
  min_retry_concurrency?: number;
}

/** A static cluster with one endpoint, given as a URL (`http://127.0.0.1:1234`). */
export interface StaticClusterOptions {
  url: string;
  /** The cluster's `transport_socket`: TLS to the upstream, verified (see tls.ts). Without it, plain HTTP. */
  tls?: UpstreamTlsOptions;
  /** The cluster's retry budget; without one, Envoy's default `max_retries` circuit breaker (3 concurrent retries). */
  retryBudget?: RetryBudgetOptions;
}

/**
 * An ORIGINAL_DST cluster. Its load balancer picks the host as Envoy's does
 * (`source/extensions/clusters/original_dst/original_dst_cluster.cc`, `LoadBalancer::chooseHost`):
 * the filter state override (not modelled), then the dynamic metadata at `metadataKey`
 * (`original_dst_lb_config.metadata_key`), then the request header (`use_http_header`), then the
 * connection's restored original destination (`EnvoyOptions.originalDestination`). A value that
 * is missing or not a literal `ip:port` passes to the next source.
 */
export interface OriginalDstClusterOptions {
  originalDst: {
    /** `use_http_header: true` with this `http_header_name` (Envoy's default `x-envoy-original-dst-host`). */
    httpHeaderName?: string;
    /** `metadata_key`: namespace (`key`) and one-element `path`. */
    metadataKey?: { key: string; path: string };
  };
}

/** A cluster of the harness. */
export type ClusterOptions = StaticClusterOptions | OriginalDstClusterOptions;

/**
 * The client certificate of a downstream mTLS connection, simulated: the listener stays plain
 * HTTP (`:scheme` stays `http`), only what `connection.uri_san_peer_certificate` reads is given.
 */
export interface PeerCertificateOptions {
  /** First URI SAN of the certificate every client presents (e.g. a SPIFFE ID). */
  uriSan?: string;
  /**
   * Request header naming the URI SAN of the certificate this request's client presents, taking
   * precedence over `uriSan`; an empty value means no certificate. The harness removes the
   * header before the filter chain: it stands for the TLS handshake, not for the request.
   */
  uriSanHeader?: string;
}

/** Options of `startEnvoy`. */
export interface EnvoyOptions {
  extProc: ExtProcOptions;
  /** Route table, matched in order on the request headers. */
  routes?: RouteOptions[];
  /** Cluster of the catch-all route after `routes`; without it, unmatched requests get 404. */
  defaultCluster?: string;
  clusters: Record<string, ClusterOptions>;
  /** `per_connection_buffer_limit_bytes` (Envoy default 1 MiB), used on both directions. */
  bufferLimitBytes?: number;
  /** Route `timeout` in ms until upstream response headers (Envoy default 15 s). */
  routeTimeoutMs?: number;
  /**
   * The router filter's `suppress_envoy_headers` (default false, as in Envoy; every config Gearbox
   * ships sets it): no `x-envoy-expected-rq-timeout-ms` on the upstream request and no
   * `x-envoy-upstream-service-time` on the response (router.proto: "Do not add any additional
   * x-envoy- headers to requests or responses").
   */
  suppressEnvoyHeaders?: boolean;
  /** Downstream client certificate (default: none, as on a plain-HTTP listener). */
  peerCertificate?: PeerCertificateOptions;
  /**
   * The `ip:port` the app dialled before iptables sent the connection to this listener, restored
   * by the `original_dst` listener filter (as in every Istio sidecar). Default none: a plain
   * listener, where ORIGINAL_DST has nothing to fall back on.
   */
  originalDestination?: string;
  /** TLS termination on the listener, one filter chain per SNI (see tls.ts). Default: plain HTTP. */
  downstreamTls?: DownstreamTlsOptions;
}

/** The ext_proc configuration with Envoy's defaults filled in. */
export interface ResolvedExtProc {
  address: string;
  processingMode: ResolvedProcessingMode;
  messageTimeoutMs: number;
  maxMessageTimeoutMs: number;
  failureModeAllow: boolean;
  allowModeOverride: boolean;
  mutationRules: HeaderMutationRules;
  observabilityMode: boolean;
  statusOnError: number;
  deferredCloseTimeoutMs: number;
  requestAttributes: string[];
  receivingNamespaces: string[];
}

/** `startEnvoy` options with Envoy's defaults filled in. */
export interface ResolvedEnvoyConfig {
  extProc: ResolvedExtProc;
  routes: RouteOptions[];
  defaultCluster: string | undefined;
  clusters: Record<string, ClusterOptions>;
  bufferLimitBytes: number;
  routeTimeoutMs: number;
  suppressEnvoyHeaders: boolean;
  peerCertificate: PeerCertificateOptions;
  originalDestination: string | undefined;
  downstreamTls: DownstreamTlsOptions | undefined;
}

/** Envoy's default `per_connection_buffer_limit_bytes`. */
export const DEFAULT_BUFFER_LIMIT_BYTES = 1024 * 1024;
/** Envoy's default ext_proc `message_timeout`. */
export const DEFAULT_MESSAGE_TIMEOUT_MS = 200;
/** Envoy's default header for ORIGINAL_DST `use_http_header`. */
export const DEFAULT_ORIGINAL_DST_HEADER = "x-envoy-original-dst-host";

const HEADER_MODES: Record<number, HeaderSendMode> = { 0: "DEFAULT", 1: "SEND", 2: "SKIP" };
const BODY_MODES: Record<number, BodySendMode> = { 0: "NONE", 1: "STREAMED", 2: "BUFFERED", 3: "BUFFERED_PARTIAL" };

function headerMode(value: ProcessingMode["request_header_mode"]): HeaderSendMode {
  if (value === undefined) return "DEFAULT";
  const name = typeof value === "number" ? HEADER_MODES[value] : value;
  if (name === undefined) throw new Error(`unknown HeaderSendMode ${String(value)}`);
  return name;
}

function bodyMode(value: ProcessingMode["request_body_mode"]): BodySendMode {
  if (value === undefined) return "NONE";
  const name = typeof value === "number" ? BODY_MODES[value] : value;
  if (name === undefined) throw new Error(`unknown BodySendMode ${String(value)}`);
  return name;
}

/** Resolves a proto `ProcessingMode` (names or numbers, fields optional) to names. */
export function resolveProcessingMode(mode: ProcessingMode | null | undefined): ResolvedProcessingMode {
  const m = mode ?? {};
  return {
    request_header_mode: headerMode(m.request_header_mode),
    response_header_mode: headerMode(m.response_header_mode),
    request_body_mode: bodyMode(m.request_body_mode),
    response_body_mode: bodyMode(m.response_body_mode),
    request_trailer_mode: headerMode(m.request_trailer_mode),
    response_trailer_mode: headerMode(m.response_trailer_mode),
  };
}

/**
 * Fills in Envoy's defaults and checks that every route names a known cluster and every request
 * attribute is one the harness evaluates.
 */
export function resolveEnvoyConfig(options: EnvoyOptions): ResolvedEnvoyConfig {
  const e = options.extProc;
  const requestAttributes = e.requestAttributes ?? [];
  checkRequestAttributes(requestAttributes);
  const routes = options.routes ?? [];
  for (const route of routes) {
    if ((route.cluster === undefined) === (route.directResponse === undefined)) {
      throw new Error("startEnvoy: a route needs exactly one of cluster and directResponse");
    }
  }
  for (const cluster of [...routes.map((r) => r.cluster), options.defaultCluster]) {
    if (cluster !== undefined && !(cluster in options.clusters)) {
      throw new Error(`startEnvoy: route names unknown cluster "${cluster}"`);
    }
  }
  return {
    extProc: {
      address: e.address,
      processingMode: resolveProcessingMode(e.processingMode),
      messageTimeoutMs: e.messageTimeoutMs ?? DEFAULT_MESSAGE_TIMEOUT_MS,
      maxMessageTimeoutMs: e.maxMessageTimeoutMs ?? 0,
      failureModeAllow: e.failureModeAllow ?? false,
      allowModeOverride: e.allowModeOverride ?? false,
      mutationRules: e.mutationRules ?? {},
      observabilityMode: e.observabilityMode ?? false,
      statusOnError: e.statusOnError ?? 500,
      deferredCloseTimeoutMs: e.deferredCloseTimeoutMs ?? 5000,
      requestAttributes,
      receivingNamespaces: e.receivingNamespaces ?? [],
    },
    routes,
    defaultCluster: options.defaultCluster,
    clusters: options.clusters,
    bufferLimitBytes: options.bufferLimitBytes ?? DEFAULT_BUFFER_LIMIT_BYTES,
    routeTimeoutMs: options.routeTimeoutMs ?? 15_000,
    suppressEnvoyHeaders: options.suppressEnvoyHeaders ?? false,
    peerCertificate: options.peerCertificate ?? {},
    originalDestination: options.originalDestination,
    downstreamTls: options.downstreamTls,
  };
}
