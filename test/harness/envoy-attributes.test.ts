/**
 * `request_attributes` through the stand-in: what Envoy's ext_proc filter sends in
 * `ProcessingRequest.attributes`, on which message, for which names.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ProcessingRequest__Output } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingRequest.ts";
import { envoyAddressString, EXT_PROC_FILTER_NAME } from "./attributes.ts";
import { startEnvoy } from "./envoy.ts";
import { harness } from "./fixture.ts";
import { headerValues } from "./messages.ts";
import { send } from "./test-http.ts";

const SPIFFE = "spiffe://cluster.local/ns/shop/sa/web";
const body = [Buffer.from('{"model":"m"}')];

/** The attribute Struct's fields of one received message, as plain values; undefined without attributes. */
function attributesOf(message: ProcessingRequest__Output | undefined): Record<string, unknown> | undefined {
  const struct = message?.attributes?.[EXT_PROC_FILTER_NAME];
  if (struct === undefined) return undefined;
  return Object.fromEntries(Object.entries(struct.fields ?? {}).map(([k, v]) => [k, v.stringValue ?? v.numberValue]));
}

void test("request attributes go with request_headers only, evaluated on the downstream connection", async (t) => {
  const f = await harness({
    extProc: {
      processingMode: { request_body_mode: "BUFFERED", response_body_mode: "BUFFERED" },
      requestAttributes: ["source.address", "source.port", "connection.uri_san_peer_certificate", "source.principal"],
    },
    peerCertificate: { uriSan: SPIFFE },
  });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { path: "/v1/chat/completions", body });
  assert.equal(res.status, 200);
  const [headers, ...rest] = f.extProc.streams[0] ?? [];
  assert.equal(headers?.request, "request_headers");
  // source.principal is not an Envoy attribute: left out, nothing fails.
  assert.deepEqual(attributesOf(headers), {
    "source.address": `127.0.0.1:${res.localPort}`,
    "source.port": res.localPort,
    "connection.uri_san_peer_certificate": SPIFFE,
  });
  assert.deepEqual(Object.keys(headers?.attributes ?? {}), [EXT_PROC_FILTER_NAME]);
  assert.deepEqual(
    rest.map((m) => m.request),
    ["request_body", "response_headers", "response_body"],
  );
  for (const message of rest) assert.equal(message.attributes, undefined, message.request);
});

void test("each downstream connection has its own source.address", async (t) => {
  const f = await harness({ extProc: { requestAttributes: ["source.address"] } });
  t.after(() => f.close());
  // Concurrent, so the two connections are open at once and their ports differ.
  const responses = await Promise.all([send(f.envoy.url, { path: "/a" }), send(f.envoy.url, { path: "/b" })]);
  const expected = responses.map((r) => `127.0.0.1:${r.localPort}`).sort();
  assert.notEqual(expected[0], expected[1]);
  const sent = f.extProc.streams.map((s) => attributesOf(s[0])?.["source.address"]);
  assert.deepEqual(sent.sort(), expected);
});

void test("without request_attributes no message carries attributes", async (t) => {
  const f = await harness({
    extProc: { processingMode: { request_body_mode: "BUFFERED" } },
    peerCertificate: { uriSan: SPIFFE },
  });
  t.after(() => f.close());
  assert.equal((await send(f.envoy.url, { path: "/v1/chat/completions", body })).status, 200);
  const messages = f.extProc.messages();
  assert.equal(messages.length, 3);
  for (const message of messages) assert.equal(message.attributes, undefined, message.request);
});

void test("no client certificate: the peer URI SAN is absent, the Struct is still sent", async (t) => {
  const f = await harness({ extProc: { requestAttributes: ["connection.uri_san_peer_certificate"] } });
  t.after(() => f.close());
  assert.equal((await send(f.envoy.url, { path: "/" })).status, 200);
  assert.deepEqual(attributesOf(f.extProc.messages()[0]), {});
});

void test("the per-request certificate header overrides the harness default and never leaves the harness", async (t) => {
  const f = await harness({
    extProc: { requestAttributes: ["connection.uri_san_peer_certificate"] },
    peerCertificate: { uriSan: SPIFFE, uriSanHeader: "X-Test-Peer-Uri-San" },
  });
  t.after(() => f.close());
  const other = "spiffe://cluster.local/ns/batch/sa/job";
  await send(f.envoy.url, { path: "/1", headers: { "x-test-peer-uri-san": other } });
  await send(f.envoy.url, { path: "/2", headers: { "x-test-peer-uri-san": "" } });
  await send(f.envoy.url, { path: "/3" });
  const sans = f.extProc.streams.map((s) => attributesOf(s[0])?.["connection.uri_san_peer_certificate"]);
  assert.deepEqual(sans, [other, undefined, SPIFFE]);
  for (const stream of f.extProc.streams) assert.equal(headerValues(stream[0] ?? {})["x-test-peer-uri-san"], undefined);
  for (const request of f.upstreams.main?.requests ?? []) assert.equal(request.headers["x-test-peer-uri-san"], undefined);
  assert.equal(f.upstreams.main?.requests.length, 3);
});

void test("with request headers skipped, the attributes go with the request body message", async (t) => {
  const f = await harness({
    extProc: {
      processingMode: { request_header_mode: "SKIP", request_body_mode: "BUFFERED" },
      requestAttributes: ["source.address"],
    },
  });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { path: "/", body });
  assert.equal(res.status, 200);
  const [first, ...rest] = f.extProc.messages();
  assert.equal(first?.request, "request_body");
  assert.deepEqual(attributesOf(first), { "source.address": `127.0.0.1:${res.localPort}` });
  assert.deepEqual(
    rest.map((m) => [m.request, m.attributes]),
    [["response_headers", undefined]],
  );
});

void test("an attribute the harness cannot evaluate as Envoy would is refused at start", async () => {
  await assert.rejects(
    startEnvoy({ extProc: { address: "127.0.0.1:1", requestAttributes: ["request.path"] }, clusters: {} }),
    /request attribute "request.path" is not modelled/,
  );
});

void test("source.address spells IPv6 peers in brackets, as Envoy's Address::asString", () => {
  assert.equal(envoyAddressString("10.1.2.3", 40000), "10.1.2.3:40000");
  assert.equal(envoyAddressString("2001:db8::7", 40000), "[2001:db8::7]:40000");
});
