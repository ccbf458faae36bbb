/**
 * Envoy resources Gearbox serves, built as packed `Any`s:
 *
 * - `providerCluster`: one cluster per cloud provider, named after it (Gearbox routes on
 *   `x-gearbox-upstream: <provider name>`): LOGICAL_DNS (STATIC for an IP literal), and for
 *   https TLS origination with SNI = the host, system CAs, SAN check, HTTP/2 when ALPN offers it
 *   else HTTP/1.1; plain HTTP/1.1 for http. Same settings as the static clusters of
 *   `envoy/sidecar.yaml`.
 * - `edgeClusters`: `gearbox-edge` (EDS over ADS: the live agents) and `edge` (ORIGINAL_DST on
 *   the dynamic metadata `EDGE_ENDPOINT_METADATA`: the agent ext_proc picked; named as the sidecar's static cluster
 *   and the `x-gearbox-upstream: edge` route), HTTP/1.1.
 * - `edgeLoadAssignment` / `decodeEdgeEndpoints`: the live agents as a ClusterLoadAssignment,
 *   one locality per node (`sub_zone`), each endpoint carrying the agent's models and load in
 *   `filter_metadata["gearbox"]`, and back.
 * - `grpcCluster`, `grpcListener`, `grpcRouteConfig`: what a proxyless gRPC xDS client needs
 *   (an API listener whose HttpConnectionManager fetches its routes over ADS).
 */
import { isIP } from "node:net";
import type { Provider } from "../../extproc/providers/provider.ts";
import { jsonToStruct, packAny, structToJson, TYPE_URL_PREFIX, TYPE_URLS, type AnyMessage } from "../../common/control-plane/protos.ts";
import { parseEndpointAddress, type EdgeEndpoint } from "../../common/registry/endpoint.ts";
import { unpackAs } from "./unpack.ts";

export const EDGE_CLUSTER = "gearbox-edge";
export const EDGE_DIRECT_CLUSTER = "edge";
/**
 * Where the `edge` cluster takes its destination (`ip:port`, `[ipv6]:port`) from: the dynamic
 * metadata ext_proc sets with the request (`ProcessingResponse.dynamic_metadata`, namespace
 * `gearbox.edge`, key `endpoint`). Envoy keeps it only when the ext_proc filter lists the
 * namespace in `metadata_options.receiving_namespaces.untyped` (Envoy >= 1.30); ORIGINAL_DST reads
 * it through `original_dst_lb_config.metadata_key` (Envoy >= 1.27). Not a header: a caller could
 * send one, and ORIGINAL_DST falls back to the connection's own destination when it is missing.
 */
export const EDGE_ENDPOINT_METADATA = { namespace: "gearbox.edge", key: "endpoint" } as const;
/** The `filter_metadata` key of an edge endpoint's agent data. */
export const EDGE_METADATA_KEY = "gearbox";

const EXT = `${TYPE_URL_PREFIX}envoy.extensions.`;
const HTTP_OPTIONS_KEY = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions";
const HTTP_OPTIONS_TYPE = `${EXT}upstreams.http.v3.HttpProtocolOptions`;
const UPSTREAM_TLS_TYPE = `${EXT}transport_sockets.tls.v3.UpstreamTlsContext`;
const HCM_TYPE = `${EXT}filters.network.http_connection_manager.v3.HttpConnectionManager`;
const ROUTER_TYPE = `${EXT}filters.http.router.v3.Router`;
/** The system CA bundle of Envoy's Debian/Ubuntu images. */
const SYSTEM_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";
const PROVIDER_CONNECT_TIMEOUT = { seconds: 5 };
const EDGE_CONNECT_TIMEOUT = { seconds: 1 };
/**
 * Retries to a provider may be at most 20 % of the requests in flight (Envoy's retry budget), so
 * a storm of 429s does not become a storm of retries; the routes' retry policy is in `envoy/`.
 */
const PROVIDER_RETRY_BUDGET = { thresholds: [{ priority: "DEFAULT", retry_budget: { budget_percent: { value: 20 }, min_retry_concurrency: { value: 3 } } }] };
/** Fetch over the ADS stream the resource came on. */
const ADS_CONFIG_SOURCE = { ads: {}, resource_api_version: "V3" };

function formatAddress(ip: string, port: number): string {
  return isIP(ip) === 6 ? `[${ip}]:${port}` : `${ip}:${port}`;
}

function singleHostAssignment(clusterName: string, host: string, port: number): Record<string, unknown> {
  return { cluster_name: clusterName, endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: host, port_value: port } } } }] }] };
}

const HTTP1_ONLY = { [HTTP_OPTIONS_KEY]: { "@type": HTTP_OPTIONS_TYPE, explicit_http_config: { http_protocol_options: {} } } };

/** The provider's cluster, named after it. */
export function providerCluster(provider: Provider): AnyMessage {
  const url = provider.baseUrl;
  const tls = url.protocol === "https:";
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = url.port !== "" ? Number(url.port) : tls ? 443 : 80;
  const literal = isIP(host) !== 0;
  const httpOptions = tls
    ? {
        [HTTP_OPTIONS_KEY]: {
          "@type": HTTP_OPTIONS_TYPE,
          // SNI and the certificate check follow the (rewritten) :authority.
          upstream_http_protocol_options: { auto_sni: true, auto_san_validation: true },
          // HTTP/2 when the provider offers it through ALPN, else HTTP/1.1.
          auto_config: { http2_protocol_options: {}, http_protocol_options: {} },
        },
      }
    : HTTP1_ONLY;
  return packAny(TYPE_URLS.cluster, {
    name: provider.name,
    type: literal ? "STATIC" : "LOGICAL_DNS",
    // Prefer IPv4 but work on v6-only hosts.
    ...(!literal && { dns_lookup_family: "V4_PREFERRED" }),
    connect_timeout: PROVIDER_CONNECT_TIMEOUT,
    circuit_breakers: PROVIDER_RETRY_BUDGET,
    load_assignment: singleHostAssignment(provider.name, host, port),
    typed_extension_protocol_options: httpOptions,
    ...(tls && {
      transport_socket: {
        name: "envoy.transport_sockets.tls",
        typed_config: { "@type": UPSTREAM_TLS_TYPE, sni: host, common_tls_context: { validation_context: { trusted_ca: { filename: SYSTEM_CA_BUNDLE } } } },
      },
    }),
  });
}

function edsClusterObject(name: string): Record<string, unknown> {
  return { name, type: "EDS", eds_cluster_config: { eds_config: ADS_CONFIG_SOURCE } };
}

/** `gearbox-edge` (EDS: every live agent) and `edge` (the agent named by the header). */
export function edgeClusters(): AnyMessage[] {
  return [
    packAny(TYPE_URLS.cluster, {
      ...edsClusterObject(EDGE_CLUSTER),
      lb_policy: "LEAST_REQUEST",
      connect_timeout: EDGE_CONNECT_TIMEOUT,
      typed_extension_protocol_options: HTTP1_ONLY,
    }),
    packAny(TYPE_URLS.cluster, {
      name: EDGE_DIRECT_CLUSTER,
      type: "ORIGINAL_DST",
      lb_policy: "CLUSTER_PROVIDED",
      connect_timeout: EDGE_CONNECT_TIMEOUT,
      // Routes reach it only when the metadata holds an ip:port (the sidecar's to_edge guard):
      // without one, ORIGINAL_DST would dial the connection's original destination.
      original_dst_lb_config: { metadata_key: { key: EDGE_ENDPOINT_METADATA.namespace, path: [{ key: EDGE_ENDPOINT_METADATA.key }] } },
      typed_extension_protocol_options: HTTP1_ONLY,
    }),
  ];
}

/** The edge agents as `clusterName`'s endpoints (default `gearbox-edge`), in a stable order. */
export function edgeLoadAssignment(endpoints: readonly EdgeEndpoint[], clusterName: string = EDGE_CLUSTER): AnyMessage {
  const byNode = new Map<string, EdgeEndpoint[]>();
  for (const endpoint of [...endpoints].sort((a, b) => compare(a.node, b.node) || compare(a.agentId, b.agentId))) {
    const list = byNode.get(endpoint.node) ?? [];
    list.push(endpoint);
    byNode.set(endpoint.node, list);
  }
  return packAny(TYPE_URLS.endpoints, {
    cluster_name: clusterName,
    endpoints: [...byNode].map(([node, list]) => ({
      locality: { sub_zone: node },
      // gRPC clients skip localities without a weight; Envoy ignores it unless asked to use it.
      load_balancing_weight: { value: list.length },
      lb_endpoints: list.map(lbEndpoint),
    })),
  });
}

function lbEndpoint(endpoint: EdgeEndpoint): Record<string, unknown> {
  const parsed = parseEndpointAddress(endpoint.address);
  if (parsed === undefined) throw new Error(`edge agent ${endpoint.agentId}: address ${JSON.stringify(endpoint.address)} is not ip:port`);
  const metadata = {
    agent_id: endpoint.agentId,
    models: [...endpoint.models],
    in_flight: endpoint.inFlight,
    queued: endpoint.queued,
    max_concurrent: endpoint.maxConcurrent,
    max_queue: endpoint.maxQueue,
  };
  return {
    endpoint: { address: { socket_address: { address: parsed.ip, port_value: parsed.port } } },
    health_status: endpoint.healthy ? "HEALTHY" : "UNHEALTHY",
    metadata: { filter_metadata: { [EDGE_METADATA_KEY]: jsonToStruct(metadata) } },
  };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

interface DecodedLbEndpoint {
  endpoint?: { address?: { socket_address?: { address?: string; port_value?: number } } };
  health_status?: string;
  metadata?: { filter_metadata?: Record<string, unknown> };
}

interface DecodedLocality {
  locality?: { sub_zone?: string };
  lb_endpoints?: DecodedLbEndpoint[];
}

/**
 * The edge agents of a ClusterLoadAssignment built by `edgeLoadAssignment`. Throws, naming the
 * endpoint and field, on a resource of another type or an endpoint without Gearbox's metadata.
 */
export function decodeEdgeEndpoints(any: AnyMessage): EdgeEndpoint[] {
  const assignment = unpackAs(any, TYPE_URLS.endpoints);
  const out: EdgeEndpoint[] = [];
  for (const locality of (assignment["endpoints"] as DecodedLocality[] | undefined) ?? []) {
    for (const lb of locality.lb_endpoints ?? []) {
      const socket = lb.endpoint?.address?.socket_address;
      const address = formatAddress(socket?.address ?? "", socket?.port_value ?? 0);
      const raw = lb.metadata?.filter_metadata?.[EDGE_METADATA_KEY];
      if (raw === undefined) throw new Error(`endpoint ${address}: no filter_metadata.${EDGE_METADATA_KEY}`);
      const meta = structToJson(raw);
      const read = fieldReader(address, meta);
      out.push({
        agentId: read.string("agent_id"),
        node: locality.locality?.sub_zone ?? "",
        address,
        models: read.strings("models"),
        inFlight: read.number("in_flight"),
        queued: read.number("queued"),
        maxConcurrent: read.number("max_concurrent"),
        maxQueue: read.number("max_queue"),
        // UNKNOWN (unset) counts as healthy, as in Envoy's load balancers.
        healthy: lb.health_status === undefined || lb.health_status === "HEALTHY" || lb.health_status === "UNKNOWN",
      });
    }
  }
  return out;
}

function fieldReader(address: string, meta: Record<string, unknown>) {
  const bad = (key: string, expected: string): Error =>
    new Error(`endpoint ${address}: filter_metadata.${EDGE_METADATA_KEY}.${key} should be ${expected}, got ${JSON.stringify(meta[key])}`);
  return {
    string(key: string): string {
      const value = meta[key];
      if (typeof value !== "string") throw bad(key, "a string");
      return value;
    },
    number(key: string): number {
      const value = meta[key];
      if (typeof value !== "number") throw bad(key, "a number");
      return value;
    },
    strings(key: string): string[] {
      const value = meta[key];
      if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) throw bad(key, "a list of strings");
      return value;
    },
  };
}

/** An EDS cluster fetched over ADS with round-robin balancing, as gRPC xDS clients accept it. */
export function grpcCluster(name: string): AnyMessage {
  return packAny(TYPE_URLS.cluster, { ...edsClusterObject(name), lb_policy: "ROUND_ROBIN" });
}

/**
 * An API listener (what `xds:///<name>` resolves) whose HttpConnectionManager fetches the
 * RouteConfiguration `routeConfigName` over ADS and ends in the router filter.
 */
export function grpcListener(name: string, routeConfigName: string): AnyMessage {
  return packAny(TYPE_URLS.listener, {
    name,
    api_listener: {
      api_listener: {
        "@type": HCM_TYPE,
        stat_prefix: name,
        rds: { config_source: ADS_CONFIG_SOURCE, route_config_name: routeConfigName },
        http_filters: [{ name: "envoy.filters.http.router", typed_config: { "@type": ROUTER_TYPE } }],
      },
    },
  });
}

/** A RouteConfiguration sending every request, whatever its authority, to `clusterName`. */
export function grpcRouteConfig(name: string, clusterName: string): AnyMessage {
  return packAny(TYPE_URLS.route, {
    name,
    virtual_hosts: [{ name: clusterName, domains: ["*"], routes: [{ match: { prefix: "/" }, route: { cluster: clusterName } }] }],
  });
}
