/**
 * Routing in the Envoy stand-in: the route cache and `clear_route_cache`, ORIGINAL_DST from a
 * request header or ext_proc's dynamic metadata (and its fallback to the connection's original
 * destination), routes guarded on dynamic metadata, direct responses, rewrites, and the router's
 * own local replies passing through ext_proc.
 */
import assert from "node:assert/strict";
import type { ServerResponse } from "node:http";
import { test } from "node:test";
import { harness, on } from "./fixture.ts";
import { headerValues, matchingResponse, setHeader } from "./messages.ts";
import { send, startUpstream } from "./test-http.ts";
import type { ProcessingResponse } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingResponse.ts";
import type { RouteOptions } from "./config.ts";

const routes = [{ header: "x-gearbox-upstream", value: "edge", cluster: "edge" }];

void test("clear_route_cache re-routes on the mutated headers", async (t) => {
  const f = await harness({
    routes,
    upstreams: { cloud: undefined, edge: undefined },
    script: on("request_headers", (m) => [
      matchingResponse(m, { header_mutation: { set_headers: [setHeader("x-gearbox-upstream", "edge")] }, clear_route_cache: true }),
    ]),
  });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { body: [Buffer.from("hi")] });
  assert.equal(res.headers["x-upstream"], "edge");
  assert.equal(f.upstreams.edge?.requests.length, 1);
  assert.equal(f.upstreams.cloud?.requests.length, 0);
  assert.deepEqual(f.envoy.stats.upstreamRequests, { edge: 1 });
  assert.equal(f.envoy.stats.routeCacheClears, 1);
});

void test("without clear_route_cache the route chosen from the original headers sticks", async (t) => {
  const f = await harness({
    routes,
    upstreams: { cloud: undefined, edge: undefined },
    script: on("request_headers", (m) => [matchingResponse(m, { header_mutation: { set_headers: [setHeader("x-gearbox-upstream", "edge")] } })]),
  });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { body: [Buffer.from("hi")] });
  assert.equal(res.headers["x-upstream"], "cloud");
  assert.equal(f.upstreams.cloud?.requests[0]?.headers["x-gearbox-upstream"], "edge", "mutation applied, route kept");
  assert.equal(f.upstreams.edge?.requests.length, 0);
});

void test("a route's request_headers_to_remove takes the headers off once it is chosen: routed on, never sent upstream", async (t) => {
  const f = await harness({
    routes: [{ ...routes[0], requestHeadersToRemove: ["x-gearbox-upstream", "x-gearbox-edge-endpoint"] }],
    upstreams: { cloud: undefined, edge: undefined },
    script: on("request_headers", (m) => [
      matchingResponse(m, {
        header_mutation: { set_headers: [setHeader("x-gearbox-upstream", "edge"), setHeader("x-gearbox-edge-endpoint", "10.0.0.9:8088")] },
        clear_route_cache: true,
      }),
    ]),
  });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { body: [Buffer.from("hi")], headers: { "x-app": "kept" } });
  assert.equal(res.headers["x-upstream"], "edge", "the header still routed the request");
  const seen = f.upstreams.edge?.requests[0]?.headers;
  assert.equal(seen?.["x-gearbox-upstream"], undefined);
  assert.equal(seen?.["x-gearbox-edge-endpoint"], undefined);
  assert.equal(seen?.["x-app"], "kept");
  // Envoy's router default: its own headers both ways.
  assert.equal(seen?.["x-envoy-expected-rq-timeout-ms"], "15000");
  assert.ok(res.headers["x-envoy-upstream-service-time"] !== undefined);
});

void test("suppress_envoy_headers: the router adds no x-envoy-* header to the upstream request or to the response", async (t) => {
  const f = await harness({ suppressEnvoyHeaders: true });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { body: [Buffer.from("hi")] });
  assert.equal(res.status, 200);
  const names = [...Object.keys(f.upstreams.main?.requests[0]?.headers ?? {}), ...Object.keys(res.headers)];
  assert.deepEqual(
    names.filter((n) => n.startsWith("x-envoy-")),
    [],
  );
});

void test("a route's timeout: 504 upstream_response_timeout past it; 0 disables it (Gearbox's routes), and no timeout header is sent", async (t) => {
  const slow = async (_: unknown, res: ServerResponse) => {
    await new Promise((resolve) => setTimeout(resolve, 150));
    res.end("late");
  };
  const f = await harness({
    routes: [
      { header: "x-to", value: "short", cluster: "main", timeoutMs: 40 },
      { header: "x-to", value: "none", cluster: "main", timeoutMs: 0 },
    ],
    upstreams: { main: slow },
  });
  t.after(() => f.close());
  const short = await send(f.envoy.url, { method: "GET", headers: { "x-to": "short" } });
  assert.equal(short.status, 504);
  assert.equal(short.body.toString(), "upstream request timeout");
  const none = await send(f.envoy.url, { method: "GET", headers: { "x-to": "none" } });
  assert.equal(none.status, 200);
  assert.equal(none.body.toString(), "late");
  assert.equal(f.upstreams.main?.requests[0]?.headers["x-envoy-expected-rq-timeout-ms"], "40");
  assert.equal(f.upstreams.main?.requests[1]?.headers["x-envoy-expected-rq-timeout-ms"], undefined);
});

void test("clear_route_cache without a header mutation is ignored", async (t) => {
  const f = await harness({
    routes,
    upstreams: { cloud: undefined, edge: undefined },
    script: on("request_headers", (m) => [matchingResponse(m, { clear_route_cache: true })]),
  });
  t.after(() => f.close());
  await send(f.envoy.url, { method: "GET", headers: { "x-other": "1" } });
  assert.equal(f.envoy.stats.clearRouteCacheIgnored, 1);
  assert.equal(f.envoy.stats.routeCacheClears, 0);
});

void test("clear_route_cache in a BUFFERED request body response routes before the upstream call", async (t) => {
  const f = await harness({
    routes,
    upstreams: { cloud: undefined, edge: undefined },
    extProc: { processingMode: { request_body_mode: "BUFFERED" } },
    script: on("request_body", (m) => [
      matchingResponse(m, { header_mutation: { set_headers: [setHeader("x-gearbox-upstream", "edge")] }, clear_route_cache: true }),
    ]),
  });
  t.after(() => f.close());
  await send(f.envoy.url, { body: [Buffer.from("{}")] });
  assert.deepEqual(f.envoy.stats.upstreamRequests, { edge: 1 });
});

void test("an ORIGINAL_DST cluster sends to the ip:port of the configured request header", async (t) => {
  const edgeAgent = await startUpstream("edge-agent");
  const f = await harness({
    routes,
    upstreams: { cloud: undefined },
    clusters: { edge: { originalDst: { httpHeaderName: "x-gearbox-edge-endpoint" } } },
    script: on("request_headers", (m) => [
      matchingResponse(m, {
        header_mutation: {
          set_headers: [setHeader("x-gearbox-upstream", "edge"), setHeader("x-gearbox-edge-endpoint", `127.0.0.1:${edgeAgent.port}`)],
        },
        clear_route_cache: true,
      }),
    ]),
  });
  t.after(async () => {
    await f.close();
    await edgeAgent.close();
  });
  const res = await send(f.envoy.url, { body: [Buffer.from("prompt")] });
  assert.equal(res.status, 200);
  assert.equal(res.headers["x-upstream"], "edge-agent");
  assert.equal(edgeAgent.requests[0]?.body.toString(), "prompt");
  assert.deepEqual(f.envoy.stats.upstreamRequests, { edge: 1 });
  assert.deepEqual(f.envoy.stats.upstreamHosts, { [`127.0.0.1:${edgeAgent.port}`]: 1 });
});

void test("an ORIGINAL_DST route without a usable endpoint header is a 503 seen by ext_proc", async (t) => {
  const f = await harness({
    routes,
    upstreams: { cloud: undefined },
    clusters: { edge: { originalDst: { httpHeaderName: "x-gearbox-edge-endpoint" } } },
  });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { method: "GET", headers: { "x-gearbox-upstream": "edge", "x-gearbox-edge-endpoint": "edge-host:8088" } });
  assert.equal(res.status, 503);
  assert.equal(res.body.toString(), "no healthy upstream");
  const responseHeaders = f.extProc.messages().find((m) => m.request === "response_headers");
  assert.equal(headerValues(responseHeaders ?? {})[":status"], "503", "router local replies go through the encoder filters");
});

void test("no matching route and no default cluster is a 404 that still goes through ext_proc", async (t) => {
  const f = await harness({ routes, upstreams: { edge: undefined }, defaultCluster: null });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { method: "GET" });
  assert.equal(res.status, 404);
  assert.equal(f.upstreams.edge?.requests.length, 0);
  assert.deepEqual(f.envoy.stats.localReplies, [{ status: 404, details: "route_not_found" }]);
  const responseHeaders = f.extProc.messages().find((m) => m.request === "response_headers");
  assert.equal(headerValues(responseHeaders ?? {})[":status"], "404");
});

void test("prefix_rewrite and host_rewrite_literal shape the upstream request", async (t) => {
  const f = await harness({
    routes: [{ prefix: "/openai/", prefixRewrite: "/", hostRewrite: "api.openai.com", cluster: "main" }],
    defaultCluster: "main",
  });
  t.after(() => f.close());
  await send(f.envoy.url, { method: "GET", path: "/openai/v1/models" });
  const seen = f.upstreams.main?.requests[0];
  assert.equal(seen?.url, "/v1/models");
  assert.equal(seen.headers.host, "api.openai.com");
});

void test("an unreachable upstream is a 503 local reply", async (t) => {
  const f = await harness({ upstreams: { cloud: undefined }, clusters: { dead: { url: "http://127.0.0.1:1" } }, defaultCluster: "dead" });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { method: "GET" });
  assert.equal(res.status, 503);
  assert.match(res.body.toString(), /^upstream connect error or disconnect\/reset before headers/);
});

/** The shipped sidecar's edge route shape: x-gearbox-upstream: edge and an ip:port in gearbox.edge/endpoint. */
const guardedEdge: RouteOptions = {
  header: "x-gearbox-upstream",
  value: "edge",
  dynamicMetadata: { filter: "gearbox.edge", key: "endpoint", regex: "([0-9]{1,3}\\.){3}[0-9]{1,3}:[0-9]{1,5}" },
  cluster: "edge",
};
const noRoute: RouteOptions = { prefix: "/", directResponse: { status: 502, body: "gearbox_no_route" } };
const metadataEdge = { originalDst: { metadataKey: { key: "gearbox.edge", path: "endpoint" } } };

/** A request_body answer choosing the edge, naming `endpoint` in dynamic metadata namespace `namespace`. */
function edgeAnswer(endpoint: string | undefined, namespace = "gearbox.edge") {
  return on("request_body", (m) => {
    const answer: ProcessingResponse = matchingResponse(m, {
      header_mutation: { set_headers: [setHeader("x-gearbox-upstream", "edge")] },
      clear_route_cache: true,
    });
    if (endpoint !== undefined) {
      answer.dynamic_metadata = { fields: { [namespace]: { structValue: { fields: { endpoint: { stringValue: endpoint } } } } } };
    }
    return [answer];
  });
}

void test("ORIGINAL_DST with metadata_key dials the ip:port ext_proc set in a receiving namespace, and the guarded route matches it", async (t) => {
  const edgeAgent = await startUpstream("edge-agent");
  const f = await harness({
    routes: [guardedEdge, noRoute],
    upstreams: { app: undefined },
    defaultCluster: null,
    clusters: { edge: metadataEdge },
    extProc: { processingMode: { request_body_mode: "BUFFERED" }, receivingNamespaces: ["gearbox.edge"] },
    script: edgeAnswer(`127.0.0.1:${edgeAgent.port}`),
  });
  t.after(async () => {
    await f.close();
    await edgeAgent.close();
  });
  const res = await send(f.envoy.url, { body: [Buffer.from("prompt")] });
  assert.equal(res.status, 200);
  assert.equal(edgeAgent.requests[0]?.body.toString(), "prompt");
  assert.equal(edgeAgent.requests[0]?.headers["x-gearbox-edge-endpoint"], undefined, "no header carries the endpoint");
});

for (const [name, endpoint, namespace] of [
  ["no dynamic metadata at all", undefined, "gearbox.edge"],
  ["metadata in a namespace the filter does not receive", "127.0.0.1:1", "other"],
  ["a value that is not an ip:port", "api.openai.com:80", "gearbox.edge"],
] as const) {
  void test(`the edge asked for with ${name}: no-route 502, never the connection's original destination`, async (t) => {
    const dialled = await startUpstream("what-the-app-dialled");
    const f = await harness({
      routes: [guardedEdge, noRoute],
      upstreams: { app: undefined },
      defaultCluster: null,
      clusters: { edge: metadataEdge },
      originalDestination: `127.0.0.1:${dialled.port}`,
      extProc: { processingMode: { request_body_mode: "BUFFERED" }, receivingNamespaces: ["gearbox.edge"] },
      script: edgeAnswer(endpoint === undefined ? undefined : endpoint.replace("127.0.0.1:1", `127.0.0.1:${dialled.port}`), namespace),
    });
    t.after(async () => {
      await f.close();
      await dialled.close();
    });
    const res = await send(f.envoy.url, { headers: { "x-gearbox-edge-endpoint": `127.0.0.1:${dialled.port}` }, body: [Buffer.from("prompt")] });
    assert.equal(res.status, 502);
    assert.equal(res.body.toString(), "gearbox_no_route");
    assert.equal(dialled.requests.length, 0);
    assert.deepEqual(f.envoy.stats.localReplies, [{ status: 502, details: "direct_response" }]);
  });
}

void test("without the guard, ORIGINAL_DST falls back to the connection's original destination (why the route needs it)", async (t) => {
  const dialled = await startUpstream("what-the-app-dialled");
  const f = await harness({
    routes: [{ header: "x-gearbox-upstream", value: "edge", cluster: "edge" }, noRoute],
    upstreams: { app: undefined },
    defaultCluster: null,
    clusters: { edge: { originalDst: { metadataKey: { key: "gearbox.edge", path: "endpoint" }, httpHeaderName: "x-gearbox-edge-endpoint" } } },
    originalDestination: `127.0.0.1:${dialled.port}`,
    extProc: { processingMode: { request_body_mode: "BUFFERED" }, receivingNamespaces: ["gearbox.edge"] },
    script: edgeAnswer(undefined),
  });
  t.after(async () => {
    await f.close();
    await dialled.close();
  });
  // A header that does not parse passes to the next source, as a missing one does.
  const res = await send(f.envoy.url, { headers: { "x-gearbox-edge-endpoint": "edge-host:8088" }, body: [Buffer.from("prompt")] });
  assert.equal(res.status, 200);
  assert.equal(res.headers["x-upstream"], "what-the-app-dialled");
  assert.equal(dialled.requests[0]?.body.toString(), "prompt");
});
