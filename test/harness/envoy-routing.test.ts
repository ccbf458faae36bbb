/**
 * Routing in the Envoy stand-in: the route cache and `clear_route_cache`, ORIGINAL_DST from a
 * request header, rewrites, and the router's own local replies passing through ext_proc.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { harness, on } from "./fixture.ts";
import { headerValues, matchingResponse, setHeader } from "./messages.ts";
import { send, startUpstream } from "./test-http.ts";

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
    script: on("request_headers", (m) => [
      matchingResponse(m, { header_mutation: { set_headers: [setHeader("x-gearbox-upstream", "edge")] } }),
    ]),
  });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { body: [Buffer.from("hi")] });
  assert.equal(res.headers["x-upstream"], "cloud");
  assert.equal(f.upstreams.cloud?.requests[0]?.headers["x-gearbox-upstream"], "edge", "mutation applied, route kept");
  assert.equal(f.upstreams.edge?.requests.length, 0);
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
