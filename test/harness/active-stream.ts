/**
 * One downstream HTTP request through the stand-in: Envoy's connection manager `ActiveStream`
 * with the filter chain [ext_proc, router].
 *
 * Order of events, as in Envoy: the connection manager normalises the request headers and caches
 * the route; ext_proc processes the request (and may clear the route cache); the router proxies
 * (or replies locally); ext_proc processes the response; the response goes downstream.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import type { DownstreamConnection } from "./attributes.ts";
import { AbortedError, BodyReader } from "./body.ts";
import { DynamicMetadata } from "./dynamic-metadata.ts";
import type { PeerCertificateOptions, ResolvedEnvoyConfig } from "./config.ts";
import { Downstream } from "./downstream.ts";
import type { FilterEnv } from "./filter-core.ts";
import { ExtProcFilter } from "./filter.ts";
import { contentLengthOf, HeaderMap, isHopByHop, rawHeaderPairs } from "./headers.ts";
import type { Router, UpstreamResult } from "./routing.ts";
import type { EnvoyStats } from "./stats.ts";

/** What every stream of one harness shares. */
export interface StreamEnv {
  config: ResolvedEnvoyConfig;
  stats: EnvoyStats;
  filterEnv: FilterEnv;
  router: Router;
}

/**
 * The request header map the filter chain sees: the HTTP/1 codec turns `host` into `:authority`
 * and adds `:path`, `:method`, `:scheme`; the connection manager drops hop-by-hop headers and
 * adds `x-forwarded-proto` and `x-request-id` when missing (ConnectionManagerUtility::mutateRequestHeaders).
 * `peerHeader` (the simulated client certificate) is not part of the request.
 */
function requestHeaders(req: IncomingMessage, peerHeader: string | undefined): HeaderMap {
  // `:scheme` and x-forwarded-proto follow the downstream connection: https when TLS was
  // terminated here (ConnectionManagerUtility::mutateRequestHeaders, `connection.ssl()`).
  const scheme = "encrypted" in req.socket && req.socket.encrypted ? "https" : "http";
  const headers = HeaderMap.of([
    [":authority", req.headers.host ?? ""],
    [":path", req.url ?? "/"],
    [":method", req.method ?? "GET"],
    [":scheme", scheme],
  ]);
  for (const [k, v] of rawHeaderPairs(req)) if (k !== "host" && k !== peerHeader && !isHopByHop(k, v)) headers.add(k, v);
  if (!headers.has("x-forwarded-proto")) headers.add("x-forwarded-proto", scheme);
  if (!headers.has("x-request-id")) headers.add("x-request-id", randomUUID());
  return headers;
}

/** The downstream connection the attributes describe, with its simulated client certificate. */
function downstreamConnection(req: IncomingMessage, peer: PeerCertificateOptions): DownstreamConnection {
  const header = peer.uriSanHeader === undefined ? undefined : req.headers[peer.uriSanHeader.toLowerCase()];
  const uriSan = typeof header === "string" ? header : peer.uriSan;
  return {
    remoteAddress: req.socket.remoteAddress ?? "",
    remotePort: req.socket.remotePort ?? 0,
    peerUriSan: uriSan === "" ? undefined : uriSan,
  };
}

/** A request has a body when it is chunked or has a non-zero content-length (HTTP/1.1 framing). */
function requestHasBody(req: IncomingMessage): boolean {
  return req.headers["transfer-encoding"] !== undefined || (contentLengthOf(req.headers) ?? 0) > 0;
}

/** A response has no body for HEAD, 204, 304 and content-length 0. */
function responseHasBody(method: string, status: number, contentLength: number | undefined): boolean {
  return method !== "HEAD" && status !== 204 && status !== 304 && contentLength !== 0;
}

/** Serves one request; never rejects. */
export async function serveStream(env: StreamEnv, req: IncomingMessage, res: ServerResponse): Promise<void> {
  env.stats.downstreamRequests += 1;
  const downstream = new Downstream(res, env.stats);
  const signal = downstream.signal;
  let routeCacheCleared = false;
  const metadata = new DynamicMetadata();
  const peer = env.config.peerCertificate;
  const filter = new ExtProcFilter(
    env.filterEnv,
    {
      localReply: (reply) => downstream.localReply(reply),
      clearRouteCache: () => {
        routeCacheCleared = true;
      },
      metadata,
    },
    signal,
    downstreamConnection(req, peer),
  );
  const headers = requestHeaders(req, peer.uriSanHeader?.toLowerCase());
  const requestBody = new BodyReader(req, {
    noBody: !requestHasBody(req),
    contentLength: contentLengthOf(req.headers),
    limit: env.config.bufferLimitBytes,
    signal,
    overflowIsFatal: () => filter.buffersWholeBody("request"),
    // FilterManager requestDataTooLarge: 413 with the code's name as body.
    onOverflow: () => downstream.localReply({ status: 413, body: Buffer.from("Payload Too Large"), details: "request_payload_too_large" }),
    onSourceError: () => downstream.reset(),
  });
  // The connection manager resolves the route before the filter chain runs and caches it.
  const cachedRoute = env.router.match(headers, metadata);
  try {
    const request = await filter.decode(headers, requestBody);
    if (request === undefined) return;
    const route = routeCacheCleared ? env.router.match(request.headers, metadata) : cachedRoute;
    const upstream = await env.router.forward(route, request, signal, metadata);
    if (upstream.type === "aborted" || signal.aborted) return;
    const method = headers.get(":method") ?? "GET";
    const overflowIsFatal = (): boolean => filter.buffersWholeBody("response");
    const response = await filter.encode(...responseFor(env, upstream, method, downstream, overflowIsFatal));
    if (response === undefined) return;
    downstream.writeHeaders(response.headers);
    await downstream.writeBody(response.body);
  } catch (error) {
    if (error instanceof AbortedError) return;
    console.error("envoy harness: unexpected error", error);
    if (downstream.responseStarted) downstream.reset();
    else downstream.localReply({ status: 500, body: Buffer.alloc(0), details: "harness_error" });
  } finally {
    filter.onDestroy();
    if (signal.aborted) requestBody.discard();
  }
}

/** The response headers and body reader the encoder filters get. */
function responseFor(
  env: StreamEnv,
  upstream: Exclude<UpstreamResult, { type: "aborted" }>,
  method: string,
  downstream: Downstream,
  overflowIsFatal: () => boolean,
): [HeaderMap, BodyReader] {
  const limits = {
    limit: env.config.bufferLimitBytes,
    signal: downstream.signal,
    overflowIsFatal,
    // FilterManager responseDataTooLarge: 500 before the response started, else reset.
    onOverflow: () =>
      downstream.localReply({
        status: 500,
        body: Buffer.from("Internal Server Error"),
        details: "response_payload_too_large",
      }),
    onSourceError: () => downstream.reset(),
  };
  if (upstream.type === "local") {
    // A router local reply goes through the encoder filters like an upstream response.
    const headers = HeaderMap.of([
      [":status", String(upstream.status)],
      ["content-length", String(upstream.body.length)],
    ]);
    if (upstream.body.length > 0) headers.add("content-type", "text/plain");
    return [
      headers,
      new BodyReader(Readable.from([upstream.body]), {
        ...limits,
        noBody: upstream.body.length === 0,
        contentLength: upstream.body.length,
      }),
    ];
  }
  const status = upstream.message.statusCode ?? 502;
  const contentLength = contentLengthOf(upstream.message.headers);
  return [
    upstream.headers,
    new BodyReader(upstream.message, {
      ...limits,
      noBody: !responseHasBody(method, status, contentLength),
      contentLength,
    }),
  ];
}
