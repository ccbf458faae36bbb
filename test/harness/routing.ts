/**
 * The route table and the router filter: picks a route on the request headers and the stream's
 * dynamic metadata, answers direct responses, resolves a cluster to an endpoint (static, or
 * ORIGINAL_DST from dynamic metadata, a request header or the connection), and proxies the request
 * over HTTP/1.1. Failures before response headers become the router's local replies (404 NR,
 * 503 no healthy upstream / connect failure, 504 timeout), which still pass through the ext_proc
 * encoder path as Envoy's local replies do.
 */
import http from "node:http";
import https from "node:https";
import { once } from "node:events";
import { isIP } from "node:net";
import { AbortedError } from "./body.ts";
import {
  DEFAULT_ORIGINAL_DST_HEADER,
  type DynamicMetadataMatch,
  type OriginalDstClusterOptions,
  type ResolvedEnvoyConfig,
  type RetryBudgetOptions,
  type RetryPolicyOptions,
  type RouteOptions,
} from "./config.ts";
import type { DynamicMetadata } from "./dynamic-metadata.ts";
import type { Forward } from "./filter.ts";
import { HeaderMap, isHopByHop, rawHeaderPairs } from "./headers.ts";
import type { EnvoyStats } from "./stats.ts";
import { upstreamTlsFailure, type UpstreamTlsOptions } from "./tls.ts";

/** What the router got: an upstream response, a local reply of its own, or nothing (aborted). */
export type UpstreamResult =
  | { type: "upstream"; headers: HeaderMap; message: http.IncomingMessage }
  | { type: "local"; status: number; body: Buffer; details: string }
  | { type: "aborted" };

interface Endpoint {
  host: string;
  port: number;
}

const CONNECT_FAILURE = "upstream connect error or disconnect/reset before headers. reset reason: ";

function local(status: number, body: string, details: string): UpstreamResult {
  return { type: "local", status, body: Buffer.from(body), details };
}

/** `ip:port` or `[ipv6]:port` with a literal IP, as ORIGINAL_DST requires ("fully resolved IP address"). */
function parseIpPort(value: string | undefined): Endpoint | undefined {
  const m = value === undefined ? null : /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(value.trim());
  if (m === null || m[1] === undefined || m[2] === undefined || isIP(m[1]) === 0) return undefined;
  const port = Number(m[2]);
  return port > 0 && port < 65536 ? { host: m[1], port } : undefined;
}

/**
 * ORIGINAL_DST's host (`original_dst_cluster.cc` `LoadBalancer::chooseHost`): `metadata_key` first
 * (request metadata; the connection's is not modelled), then the header when `use_http_header`,
 * then the connection's restored original destination. Each source that is missing or does not
 * parse as a literal `ip:port` passes to the next, so a request without a usable override goes to
 * whatever the app dialled.
 */
function originalDstHost(
  cluster: OriginalDstClusterOptions["originalDst"],
  request: Forward,
  metadata: DynamicMetadata,
  originalDestination: string | undefined,
): Endpoint | undefined {
  const key = cluster.metadataKey;
  const fromMetadata = key === undefined ? undefined : parseIpPort(metadata.string(key.key, key.path));
  if (fromMetadata !== undefined) return fromMetadata;
  const header = cluster.httpHeaderName;
  const fromHeader = header === undefined ? undefined : parseIpPort(request.headers.get(header || DEFAULT_ORIGINAL_DST_HEADER));
  return fromHeader ?? parseIpPort(originalDestination);
}

/** `MetadataMatcher` with a `safe_regex` string value: the whole string must match. */
function metadataMatches(match: DynamicMetadataMatch | undefined, metadata: DynamicMetadata): boolean {
  if (match === undefined) return true;
  const value = metadata.string(match.filter, match.key);
  return value !== undefined && new RegExp(`^(?:${match.regex})$`).test(value);
}

/** Response headers of an upstream message as the router hands them to the encoder filters. */
function upstreamResponseHeaders(message: http.IncomingMessage, startedAt: number, suppressEnvoyHeaders: boolean): HeaderMap {
  const headers = HeaderMap.of([[":status", String(message.statusCode ?? 502)]]);
  for (const [k, v] of rawHeaderPairs(message)) if (!isHopByHop(k, v)) headers.add(k, v);
  // The router adds the upstream's time to first byte (unless suppress_envoy_headers).
  if (!suppressEnvoyHeaders) headers.add("x-envoy-upstream-service-time", String(Date.now() - startedAt));
  return headers;
}

/** Whether a try's result meets the policy's `retry_on` (`retry_state_impl.cc` `wouldRetryFromHeaders`/`FromReset`). */
function retriable(policy: RetryPolicyOptions, result: UpstreamResult): boolean {
  const on = new Set(policy.retry_on.split(",").map((c) => c.trim()));
  if (result.type === "aborted") return false;
  if (result.type === "local") {
    if (!result.details.startsWith("upstream_reset_before_response_started")) return false;
    // A refused connection never carried the request; any other reset may have.
    const connect = result.details.includes("connection failure");
    return (connect && (on.has("connect-failure") || on.has("reset-before-request"))) || on.has("reset") || on.has("5xx") || on.has("gateway-error");
  }
  const status = Number(result.headers.get(":status"));
  if (on.has("retriable-status-codes") && (policy.retriable_status_codes ?? []).includes(status)) return true;
  if (on.has("5xx") && status >= 500) return true;
  return on.has("gateway-error") && (status === 502 || status === 503 || status === 504);
}

/**
 * The wait before retry `n`: a reset header's seconds when `rate_limited_retry_back_off` reads one
 * within `max_interval` (jittered to [interval, 1.5 × interval]), else Envoy's jittered
 * exponential back-off, random in [0, min(base × (2^n − 1), max)).
 */
function backOffMs(policy: RetryPolicyOptions, n: number, result: UpstreamResult): number {
  const limited = policy.rate_limited_retry_back_off;
  if (limited && result.type === "upstream") {
    for (const name of limited.reset_headers) {
      const value = result.headers.get(name.toLowerCase());
      const seconds = value !== undefined && /^\d+$/.test(value.trim()) ? Number(value) : undefined;
      if (seconds === undefined || seconds * 1000 > (limited.max_interval_ms ?? 300_000)) continue;
      return seconds * 1000 * (1 + Math.random() / 2);
    }
  }
  const base = policy.retry_back_off?.base_interval_ms ?? 25;
  const max = policy.retry_back_off?.max_interval_ms ?? base * 10;
  return Math.random() * Math.min(base * (2 ** n - 1), max);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });
}

/** Route matching and upstream proxying of one harness. */
export class Router {
  /** Requests in flight per cluster, and retries among them (the retry budget's inputs). */
  private readonly active: Record<string, number> = {};
  private readonly activeRetries: Record<string, number> = {};
  /** Connections to TLS clusters (keep-alive, like Envoy's per-cluster connection pools). */
  private readonly tlsAgent = new https.Agent({ keepAlive: true });

  constructor(
    private readonly config: ResolvedEnvoyConfig,
    private readonly stats: EnvoyStats,
    private readonly agent: http.Agent,
  ) {}

  close(): void {
    this.tlsAgent.destroy();
  }

  /** The first route matching the headers and dynamic metadata, else the default cluster's catch-all route. */
  match(headers: HeaderMap, metadata: DynamicMetadata): RouteOptions | undefined {
    const path = headers.get(":path") ?? "/";
    const hit = this.config.routes.find(
      (r) =>
        path.startsWith(r.prefix ?? "/") &&
        (r.header === undefined || (r.value === undefined ? headers.has(r.header) : headers.get(r.header) === r.value)) &&
        metadataMatches(r.dynamicMetadata, metadata),
    );
    if (hit !== undefined) return hit;
    return this.config.defaultCluster === undefined ? undefined : { cluster: this.config.defaultCluster };
  }

  /** Proxies the request; resolves at the upstream's response headers (or a local reply). */
  async forward(route: RouteOptions | undefined, request: Forward, signal: AbortSignal, metadata: DynamicMetadata): Promise<UpstreamResult> {
    if (route === undefined) return this.localReply(404, "", "route_not_found");
    // The router answers a direct_response route itself (`Filter::decodeHeaders`, router.cc).
    if (route.directResponse !== undefined) return this.localReply(route.directResponse.status, route.directResponse.body, "direct_response");
    const clusterName = route.cluster ?? "";
    const cluster = this.config.clusters[clusterName];
    if (cluster === undefined) return this.localReply(503, "", "cluster_not_found");
    const endpoint =
      "url" in cluster
        ? { host: new URL(cluster.url).hostname, port: Number(new URL(cluster.url).port || 80) }
        : originalDstHost(cluster.originalDst, request, metadata, this.config.originalDestination);
    if (endpoint === undefined) return this.localReply(503, "no healthy upstream", "no_healthy_upstream");

    const headers = request.headers;
    if (route.prefixRewrite !== undefined) {
      const path = headers.get(":path") ?? "/";
      headers.set(":path", route.prefixRewrite + path.slice((route.prefix ?? "/").length));
    }
    if (route.hostRewrite !== undefined) headers.set(":authority", route.hostRewrite);
    // The route's own header rules, once it is chosen (`finalizeRequestHeaders`, config_impl.cc).
    for (const name of route.requestHeadersToRemove ?? []) headers.remove(name);
    const policy = route.retryPolicy;
    const tls = "url" in cluster ? cluster.tls : undefined;
    const timeoutMs = route.timeoutMs ?? this.config.routeTimeoutMs;
    if (policy === undefined) return this.attempt(clusterName, endpoint, request, request.body, signal, tls, timeoutMs);
    // With a retry policy the router buffers the request body so that it can send it again.
    const chunks: Buffer[] = [];
    for await (const chunk of request.body) chunks.push(chunk);
    const body = [Buffer.concat(chunks)];
    const budget = "url" in cluster ? cluster.retryBudget : undefined;
    this.active[clusterName] = (this.active[clusterName] ?? 0) + 1;
    let retrying = false;
    try {
      for (let retries = 0; ; retries += 1) {
        const result = await this.attempt(clusterName, endpoint, request, body, signal, tls, timeoutMs);
        if (retrying) this.activeRetries[clusterName] = (this.activeRetries[clusterName] ?? 1) - 1;
        retrying = false;
        if (!retriable(policy, result) || retries >= (policy.num_retries ?? 1) || signal.aborted) return result;
        if (!this.retryAllowed(clusterName, budget)) {
          this.stats.upstreamRetryOverflow[clusterName] = (this.stats.upstreamRetryOverflow[clusterName] ?? 0) + 1;
          return result;
        }
        this.stats.upstreamRetries[clusterName] = (this.stats.upstreamRetries[clusterName] ?? 0) + 1;
        this.activeRetries[clusterName] = (this.activeRetries[clusterName] ?? 0) + 1;
        retrying = true;
        const wait = backOffMs(policy, retries + 1, result);
        // The failed try's answer is dropped, never forwarded.
        if (result.type === "upstream") result.message.resume();
        await sleep(wait, signal);
      }
    } finally {
      if (retrying) this.activeRetries[clusterName] = (this.activeRetries[clusterName] ?? 1) - 1;
      this.active[clusterName] = (this.active[clusterName] ?? 1) - 1;
    }
  }

  /**
   * Envoy's retry circuit breaker: with a `retry_budget`, active retries may be at most
   * `budget_percent` of the active requests (never fewer than `min_retry_concurrency`); without
   * one, `max_retries` (default 3) concurrent retries.
   */
  private retryAllowed(cluster: string, budget: RetryBudgetOptions | undefined): boolean {
    const retries = this.activeRetries[cluster] ?? 0;
    if (budget === undefined) return retries < 3;
    const limit = Math.max(budget.min_retry_concurrency ?? 3, ((budget.budget_percent ?? 20) / 100) * (this.active[cluster] ?? 0));
    return retries < limit;
  }

  /** One try: sends the request and its body, resolves at the response headers (or a local reply). */
  private attempt(
    clusterName: string,
    endpoint: Endpoint,
    request: Forward,
    body: Forward["body"],
    signal: AbortSignal,
    tls: UpstreamTlsOptions | undefined,
    timeoutMs: number,
  ): Promise<UpstreamResult> {
    const headers = request.headers;
    const outgoing = headers.toOutgoing();
    outgoing.host = headers.get(":authority") ?? "";
    // Only with a timeout to tell (`FilterUtility::setTimeoutHeaders`, router.cc).
    if (!this.config.suppressEnvoyHeaders && timeoutMs > 0) outgoing["x-envoy-expected-rq-timeout-ms"] = String(timeoutMs);
    // Envoy's HTTP/1 codec frames a body without content-length as chunked.
    if (!request.endOfStream && !headers.has("content-length")) outgoing["transfer-encoding"] = "chunked";

    this.stats.upstreamRequests[clusterName] = (this.stats.upstreamRequests[clusterName] ?? 0) + 1;
    const hostKey = `${endpoint.host}:${endpoint.port}`;
    this.stats.upstreamHosts[hostKey] = (this.stats.upstreamHosts[hostKey] ?? 0) + 1;
    const startedAt = Date.now();
    const common = {
      host: endpoint.host,
      port: endpoint.port,
      method: headers.get(":method") ?? "GET",
      path: headers.get(":path") ?? "/",
      headers: outgoing,
      signal,
    };
    // UpstreamTlsContext: SNI, trusted_ca, and the name check of auto_san_validation (never off).
    const upstream =
      tls === undefined
        ? http.request({ ...common, agent: this.agent })
        : https.request({ ...common, agent: this.tlsAgent, servername: tls.sni, ca: tls.trustedCa, rejectUnauthorized: true });
    upstream.flushHeaders();
    void this.sendBody(upstream, body);
    return this.awaitResponse(upstream, signal, startedAt, timeoutMs);
  }

  private awaitResponse(upstream: http.ClientRequest, signal: AbortSignal, startedAt: number, timeoutMs: number): Promise<UpstreamResult> {
    return new Promise((resolve) => {
      // No timer for a route whose timeout is 0 (disabled).
      const timer =
        timeoutMs > 0
          ? setTimeout(() => {
              upstream.destroy();
              resolve(this.localReply(504, "upstream request timeout", "upstream_response_timeout"));
            }, timeoutMs)
          : undefined;
      upstream.on("response", (message) => {
        clearTimeout(timer);
        resolve({ type: "upstream", headers: upstreamResponseHeaders(message, startedAt, this.config.suppressEnvoyHeaders), message });
      });
      upstream.on("error", (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        if (signal.aborted) {
          resolve({ type: "aborted" });
          return;
        }
        const tlsFailure = upstreamTlsFailure(error);
        const reason =
          tlsFailure !== undefined
            ? `connection failure, transport failure reason: ${tlsFailure}`
            : error.code === "ECONNREFUSED"
              ? "connection failure"
              : "connection termination";
        resolve(this.localReply(503, CONNECT_FAILURE + reason, `upstream_reset_before_response_started{${reason}}`));
      });
    });
  }

  /** Streams the (processed) request body upstream, honouring backpressure. */
  private async sendBody(upstream: http.ClientRequest, body: Forward["body"]): Promise<void> {
    try {
      for await (const chunk of body) {
        if (!upstream.write(chunk)) await once(upstream, "drain");
      }
      upstream.end();
    } catch (error) {
      // An aborted exchange already tears the request down through its signal.
      if (!(error instanceof AbortedError)) upstream.destroy();
    }
  }

  private localReply(status: number, body: string, details: string): UpstreamResult {
    this.stats.localReplies.push({ status, details });
    return local(status, body, details);
  }
}
