/**
 * The Envoy stand-in against small scripted ext_proc servers and real upstreams: protocol rules
 * (ordering, spurious and extra responses, timeouts, stream errors, immediate responses, header
 * mutation rules, observability mode).
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { startEnvoy } from "./envoy.ts";
import { harness, on } from "./fixture.ts";
import { headerValues, matchingResponse, setHeader } from "./messages.ts";
import { startNoopExtProc } from "./noop-extproc.ts";
import { echo, send, sleep, startUpstream } from "./test-http.ts";

void test("pass-through with the no-op processor keeps the bytes identical in every body mode", async (t) => {
  const extProc = await startNoopExtProc();
  const upstream = await startUpstream("main");
  t.after(async () => {
    await upstream.close();
    await extProc.close();
  });
  const body = randomBytes(300_000);
  const parts = [body.subarray(0, 100_000), body.subarray(100_000, 250_000), body.subarray(250_000)];
  for (const mode of ["NONE", "BUFFERED", "STREAMED", "BUFFERED_PARTIAL"] as const) {
    const envoy = await startEnvoy({
      extProc: { address: extProc.address, processingMode: { request_body_mode: mode, response_body_mode: mode } },
      defaultCluster: "main",
      clusters: { main: { url: upstream.url } },
    });
    const res = await send(envoy.url, { path: "/v1/chat", body: parts, gapMs: 10, headers: { "content-type": "x/y" } });
    await envoy.close();
    const seen = upstream.requests.at(-1);
    assert.ok(seen !== undefined);
    assert.equal(res.status, 200, mode);
    assert.ok(res.body.equals(body), `${mode}: client bytes`);
    assert.ok(seen.body.equals(body), `${mode}: upstream bytes`);
    assert.equal(seen.url, "/v1/chat");
    assert.equal(seen.headers["x-forwarded-proto"], "http");
    assert.match(String(seen.headers["x-request-id"]), /^[0-9a-f-]{36}$/);
    assert.equal(res.headers["x-upstream"], "main");
    assert.equal(res.headers.server, "envoy");
    assert.equal(envoy.stats.extProcMessagesSentByKind.request_headers, 1);
    assert.equal(envoy.stats.extProcMessagesSentByKind.response_headers, 1);
    assert.equal(envoy.stats.extProcMessagesSent, envoy.stats.extProcMessagesReceived, mode);
    assert.equal(envoy.stats.upstreamRequests.main, 1);
    if (mode === "NONE") assert.equal(envoy.stats.extProcMessagesSent, 2);
    if (mode === "BUFFERED") assert.equal(envoy.stats.extProcMessagesSent, 4);
  }
});

void test("request header mutations follow Envoy's default mutation rules", async (t) => {
  const f = await harness({
    script: on("request_headers", (m) => [
      matchingResponse(m, {
        header_mutation: {
          set_headers: [
            setHeader("x-added", "yes"),
            setHeader("x-envoy-foo", "bar"),
            setHeader(":authority", "evil.example"),
            setHeader("host", "evil.example"),
            setHeader(":path", "/rewritten"),
          ],
          remove_headers: ["x-remove-me", ":path", "host"],
        },
      }),
    ]),
  });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { method: "GET", path: "/orig", headers: { "x-remove-me": "1" } });
  assert.equal(res.status, 200);
  const seen = f.upstreams.main?.requests[0];
  assert.equal(seen?.headers["x-added"], "yes");
  assert.equal(seen.headers["x-remove-me"], undefined);
  assert.equal(seen.headers["x-envoy-foo"], undefined);
  assert.equal(seen.headers.host, `127.0.0.1:${f.envoy.port}`);
  assert.equal(seen.url, "/rewritten", ":path may be set, not removed");
  const reasons = f.envoy.stats.ignoredMutations.map((i) => `${i.operation} ${i.header}: ${i.reason}`);
  assert.deepEqual(reasons.sort(), [
    "remove :path: not-removable",
    "remove host: not-removable",
    "set :authority: routing-header",
    "set host: routing-header",
    "set x-envoy-foo: envoy-header",
  ]);
});

void test("allow_all_routing and allow_envoy let routing and x-envoy headers be changed", async (t) => {
  const f = await harness({
    extProc: { mutationRules: { allow_all_routing: true, allow_envoy: true } },
    script: on("request_headers", (m) => [
      matchingResponse(m, {
        header_mutation: {
          set_headers: [setHeader(":authority", "api.example"), setHeader("x-envoy-foo", "bar"), setHeader(":method", "PUT")],
        },
      }),
    ]),
  });
  t.after(() => f.close());
  assert.equal((await send(f.envoy.url, { method: "GET" })).status, 200);
  const seen = f.upstreams.main?.requests[0];
  assert.equal(seen?.headers.host, "api.example");
  assert.equal(seen.headers["x-envoy-foo"], "bar");
  assert.equal(seen.method, "PUT");
  assert.deepEqual(f.envoy.stats.ignoredMutations, []);
});

void test("disallow_is_error turns a disallowed mutation into the error status", async (t) => {
  const f = await harness({
    extProc: { mutationRules: { disallow_is_error: true } },
    script: on("request_headers", (m) => [matchingResponse(m, { header_mutation: { set_headers: [setHeader("x-envoy-foo", "bar")] } })]),
  });
  t.after(() => f.close());
  assert.equal((await send(f.envoy.url, { method: "GET" })).status, 500);
  assert.equal(f.upstreams.main?.requests.length, 0);
  assert.deepEqual(f.envoy.stats.localReplies, [{ status: 500, details: "Invalid attempt to modify x-envoy-foo" }]);
});

void test("response header mutations reach the client", async (t) => {
  const f = await harness({
    script: on("response_headers", (m) => [
      matchingResponse(m, { header_mutation: { set_headers: [setHeader("x-gearbox-route", "cloud")], remove_headers: ["x-upstream"] } }),
    ]),
  });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { body: [Buffer.from("hi")] });
  assert.equal(res.headers["x-gearbox-route"], "cloud");
  assert.equal(res.headers["x-upstream"], undefined);
  const responseHeaders = headerValues(f.extProc.streams[0]?.[1] ?? {});
  assert.equal(responseHeaders[":status"], "200");
  assert.equal(responseHeaders["x-upstream"], "main");
});

void test("a response of the wrong kind fails the request with 500 before any upstream call", async (t) => {
  const f = await harness({ script: on("request_headers", () => [{ response_body: {} }]) });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { method: "GET" });
  assert.equal(res.status, 500);
  assert.equal(f.upstreams.main?.requests.length, 0);
  assert.equal(f.envoy.stats.spuriousMessages, 1);
  assert.deepEqual(f.envoy.stats.localReplies, [{ status: 500, details: "spurious message" }]);
});

void test("failure_mode_allow continues without the processor after a wrong-kind response", async (t) => {
  const f = await harness({
    extProc: { failureModeAllow: true },
    script: on("request_headers", () => [{ response_headers: {} }]),
  });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { body: [Buffer.from("payload")] });
  assert.equal(res.status, 200);
  assert.equal(res.body.toString(), "payload");
  assert.equal(f.envoy.stats.spuriousMessages, 1);
  assert.equal(f.envoy.stats.failureModeAllowed, 1);
  assert.equal(f.envoy.stats.extProcMessagesSentByKind.response_headers, 0, "processor ignored afterwards");
});

void test("an extra response while the request is in flight fails it", async (t) => {
  const f = await harness({
    script: on("request_headers", (m) => [matchingResponse(m), matchingResponse(m)]),
    upstreams: {
      main: async (request, res) => {
        await sleep(150);
        echo("main")(request, res);
      },
    },
  });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { method: "GET" });
  assert.equal(res.status, 500);
  assert.equal(f.envoy.stats.spuriousMessages, 1);
  assert.equal(f.envoy.stats.extProcMessagesSentByKind.response_headers, 0);
});

void test("an extra response after the last expected one is ignored (stream already half-closed)", async (t) => {
  const f = await harness({
    extProc: { processingMode: { response_header_mode: "SKIP" } },
    script: on("request_headers", (m) => [matchingResponse(m), matchingResponse(m)]),
  });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { method: "GET" });
  assert.equal(res.status, 200);
  assert.equal(f.envoy.stats.spuriousMessages, 0);
  assert.equal(f.extProc.halfClosedByClient, 1);
});

void test("a message timeout returns 504 and never calls the upstream", async (t) => {
  const f = await harness({
    extProc: { messageTimeoutMs: 50 },
    script: on("request_headers", (m) => [{ action: "delay", ms: 300 }, matchingResponse(m)]),
  });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { method: "GET" });
  assert.equal(res.status, 504);
  assert.equal(f.upstreams.main?.requests.length, 0);
  assert.equal(f.envoy.stats.timeouts, 1);
  assert.deepEqual(f.envoy.stats.localReplies, [{ status: 504, details: "ext_proc_error_per-message_timeout_exceeded" }]);
});

void test("failure_mode_allow continues unchanged after a message timeout", async (t) => {
  const f = await harness({
    extProc: { messageTimeoutMs: 50, failureModeAllow: true, processingMode: { request_body_mode: "BUFFERED" } },
    script: on("request_body", () => [{ action: "delay", ms: 300 }, { request_body: { response: { body_mutation: { body: Buffer.from("late") } } } }]),
  });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { body: [Buffer.from("original")] });
  assert.equal(res.status, 200);
  assert.equal(f.upstreams.main?.requests[0]?.body.toString(), "original");
  assert.equal(f.envoy.stats.timeouts, 1);
  assert.equal(f.envoy.stats.failureModeAllowed, 1);
});

void test("override_message_timeout extends the timer up to max_message_timeout", async (t) => {
  const f = await harness({
    extProc: { messageTimeoutMs: 50, maxMessageTimeoutMs: 1000 },
    script: on("request_headers", (m) => [{ override_message_timeout: { seconds: 0, nanos: 500_000_000 } }, { action: "delay", ms: 150 }, matchingResponse(m)]),
  });
  t.after(() => f.close());
  assert.equal((await send(f.envoy.url, { method: "GET" })).status, 200);
  assert.equal(f.envoy.stats.timeoutOverrides, 1);
  assert.equal(f.envoy.stats.timeouts, 0);
});

void test("immediate_response becomes the local reply with its status, headers and body", async (t) => {
  const body = JSON.stringify({ error: { message: "slow down", type: "rate_limit", code: "rate_limited" } });
  const f = await harness({
    script: on("request_headers", () => [
      {
        immediate_response: {
          status: { code: "TooManyRequests" },
          headers: { set_headers: [setHeader("content-type", "application/json"), setHeader("x-gearbox-reason", "quota")] },
          body: Buffer.from(body),
          details: "quota_exceeded",
        },
      },
    ]),
  });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { body: [Buffer.from("{}")] });
  assert.equal(res.status, 429);
  assert.equal(res.body.toString(), body);
  assert.equal(res.headers["content-type"], "application/json");
  assert.equal(res.headers["content-length"], String(Buffer.byteLength(body)));
  assert.equal(res.headers["x-gearbox-reason"], "quota");
  assert.equal(f.upstreams.main?.requests.length, 0);
  assert.deepEqual(f.envoy.stats.upstreamRequests, {});
  assert.deepEqual(f.envoy.stats.localReplies, [{ status: 429, details: "quota_exceeded" }]);
});

void test("a gRPC error on the stream returns 500, or continues with failure_mode_allow", async (t) => {
  const script = on("request_headers", () => [{ action: "error", code: grpc.status.INTERNAL }]);
  const closed = await harness({ script });
  const open = await harness({ script, extProc: { failureModeAllow: true } });
  t.after(async () => {
    await closed.close();
    await open.close();
  });
  assert.equal((await send(closed.envoy.url, { method: "GET" })).status, 500);
  assert.equal(closed.envoy.stats.streamErrors, 1);
  assert.equal(closed.upstreams.main?.requests.length, 0);
  assert.equal((await send(open.envoy.url, { method: "GET" })).status, 200);
  assert.equal(open.envoy.stats.failureModeAllowed, 1);
  assert.equal(open.upstreams.main?.requests.length, 1);
});

void test("a stream closed cleanly lets the request continue without the processor", async (t) => {
  const f = await harness({ script: on("request_headers", () => [{ action: "close" }]) });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { body: [Buffer.from("abc")] });
  assert.equal(res.status, 200);
  assert.equal(res.body.toString(), "abc");
  assert.equal(f.envoy.stats.streamsClosedByServer, 1);
  assert.equal(f.envoy.stats.extProcMessagesSentByKind.response_headers, 0);
});

void test("an unreachable processor is a stream error: 500, or pass-through with failure_mode_allow", async (t) => {
  const upstream = await startUpstream("main");
  const options = { defaultCluster: "main", clusters: { main: { url: upstream.url } } };
  const strict = await startEnvoy({ ...options, extProc: { address: "127.0.0.1:1" } });
  const lenient = await startEnvoy({ ...options, extProc: { address: "127.0.0.1:1", failureModeAllow: true } });
  t.after(async () => {
    await strict.close();
    await lenient.close();
    await upstream.close();
  });
  assert.equal((await send(strict.url, { method: "GET" })).status, 500);
  assert.equal((await send(lenient.url, { method: "GET" })).status, 200);
  assert.equal(upstream.requests.length, 1);
});

void test("observability mode sends and goes: no waiting, only STREAMED bodies, answers ignored", async (t) => {
  const f = await harness({
    extProc: {
      observabilityMode: true,
      processingMode: { request_body_mode: "STREAMED", response_body_mode: "BUFFERED" },
    },
    script: () => [{ immediate_response: { status: { code: 403 } } }],
  });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { body: [Buffer.from("one"), Buffer.from("two")], gapMs: 20 });
  assert.equal(res.status, 200);
  assert.equal(res.body.toString(), "onetwo");
  await sleep(50);
  const kinds = f.extProc.messages().map((m) => `${m.request}:${m.observability_mode === true}`);
  assert.ok(kinds.includes("request_headers:true") && kinds.includes("response_headers:true"), kinds.join());
  assert.ok(kinds.filter((k) => k === "request_body:true").length >= 2, kinds.join());
  assert.ok(!kinds.some((k) => k.startsWith("response_body")), "BUFFERED body is not sent in observability mode");
  assert.equal(f.envoy.stats.localReplies.length, 0);
});
