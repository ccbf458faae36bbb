/**
 * Workload identity in the Istio sidecar variant, over a real gRPC stream: the app's hop to its
 * sidecar is plaintext, so Envoy's `connection.uri_san_peer_certificate` is empty, and the calling
 * sidecar's SPIFFE ID reaches Gearbox only as the `x-forwarded-client-cert` metadata the ext_proc
 * pod's inbound sidecar appends (Istio: `forward_client_cert_details: APPEND_FORWARD`, URI set).
 * A tenant bound to that principal needs no key — when, and only when, `extproc.trust_xfcc` is on.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import type { ProcessingRequest } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingRequest.ts";
import type { ProcessingResponse__Output } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingResponse.ts";
import { parseConfigText, resolveConfig, type GatewayConfig } from "../config/load.ts";
import { extProcPackage } from "../../common/envoy/protos.ts";
import { createAuthDeps } from "../governance/auth.ts";
import { Governor } from "../governance/governor.ts";
import { MemoryLimiter } from "../store/memory-limiter.ts";
import { MemoryTenantStore } from "../store/memory-tenant-store.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import { EXT_PROC_ATTRIBUTES_KEY } from "./attributes.ts";
import { startExtProcServer, type ExtProcServer } from "./server.ts";
import { Runtime } from "../runtime/runtime.ts";

const WEB = "spiffe://cluster.local/ns/shop/sa/web";
const OTHER = "spiffe://cluster.local/ns/other/sa/default";
const XFCC = (uri: string) => `By=spiffe://cluster.local/ns/gearbox/sa/gearbox;Hash=9f2c;Subject="";URI=${uri}`;

function config(trust: boolean): GatewayConfig {
  const yaml = [
    "providers:\n  - { name: openai, kind: openai, base_url: 'https://api.openai.com/v1', api_key_env: K }",
    "auth: { required: true }",
    `tenants:\n  - { id: shop, principals: ['${WEB}'] }`,
    `extproc: { trust_xfcc: ${trust} }`,
  ].join("\n");
  const raw = parseConfigText(yaml, "t.yaml");
  assert.ok(raw.ok, raw.ok ? "" : raw.errors.join());
  const resolved = resolveConfig(raw.value, { K: "sk" }, "t.yaml");
  assert.ok(resolved.ok, resolved.ok ? "" : resolved.errors.join());
  return resolved.value;
}

const servers = new Map<boolean, { server: ExtProcServer; governor: Governor }>();
before(async () => {
  for (const trust of [true, false]) {
    const cfg = config(trust);
    const governor = new Governor({ store: new MemoryLimiter(), runaway: cfg.runaway, logger: silentLogger() });
    const deps = { runtime: new Runtime(cfg), logger: silentLogger(), governance: { auth: createAuthDeps(cfg, new MemoryTenantStore(), {}), governor } };
    servers.set(trust, { server: await startExtProcServer(deps, 0, "127.0.0.1"), governor });
  }
});
after(async () => {
  for (const { server, governor } of servers.values()) {
    await server.drain(1000);
    governor.close();
  }
});

const header = (key: string, value: string) => ({ key, raw_value: Buffer.from(value) });

/** One chat request on one Process stream with `metadata`; resolves with every response. */
function converse(trust: boolean, metadata: Record<string, string>, attributes?: Record<string, string>): Promise<ProcessingResponse__Output[]> {
  const port = servers.get(trust)?.server.port;
  const Client = extProcPackage().envoy.service.ext_proc.v3.ExternalProcessor;
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(metadata)) md.add(k, v);
  const fields = Object.fromEntries(Object.entries(attributes ?? {}).map(([k, v]) => [k, { stringValue: v }]));
  const messages: ProcessingRequest[] = [
    {
      request_headers: {
        headers: { headers: [header(":method", "POST"), header(":path", "/v1/chat/completions"), header("content-type", "application/json")] },
      },
      ...(attributes ? { attributes: { [EXT_PROC_ATTRIBUTES_KEY]: { fields } } } : {}),
    },
    { request_body: { body: Buffer.from(JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] })), end_of_stream: true } },
  ];
  return new Promise((resolve, reject) => {
    const responses: ProcessingResponse__Output[] = [];
    const call = client.Process(md);
    call.on("data", (r: ProcessingResponse__Output) => responses.push(r));
    call.on("error", reject);
    call.on("end", () => {
      client.close();
      resolve(responses);
    });
    for (const m of messages) call.write(m);
    call.end();
  });
}

/** `openai` when the call went on to the provider; the error code when Gearbox refused it. */
function verdict(responses: ProcessingResponse__Output[]): string {
  const refused = responses.find((r) => r.immediate_response)?.immediate_response;
  if (refused) return (JSON.parse(refused.body?.toString() ?? "{}") as { error: { code: string } }).error.code;
  const set = responses.at(-1)?.request_body?.response?.header_mutation?.set_headers ?? [];
  return set.find((h) => h.header?.key === "x-gearbox-upstream")?.header?.raw_value?.toString() ?? "?";
}

test("trust_xfcc: a tenant bound to the calling sidecar's principal is recognised from the XFCC metadata alone", async () => {
  assert.equal(verdict(await converse(true, { "x-forwarded-client-cert": XFCC(WEB) })), "openai");
  // Another workload's sidecar is not the tenant's.
  assert.equal(verdict(await converse(true, { "x-forwarded-client-cert": XFCC(OTHER) })), "missing_api_key");
  // Envoy appends: an element an earlier hop (or the caller) wrote is not the nearest peer.
  assert.equal(verdict(await converse(true, { "x-forwarded-client-cert": `${XFCC(WEB)},${XFCC(OTHER)}` })), "missing_api_key");
  assert.equal(verdict(await converse(true, {})), "missing_api_key");
});

test("without trust_xfcc the same metadata names nobody", async () => {
  assert.equal(verdict(await converse(false, { "x-forwarded-client-cert": XFCC(WEB) })), "missing_api_key");
});

test("a peer certificate Envoy reports wins over XFCC", async () => {
  const attrs = { "connection.uri_san_peer_certificate": OTHER };
  assert.equal(verdict(await converse(true, { "x-forwarded-client-cert": XFCC(WEB) }, attrs)), "missing_api_key");
  assert.equal(verdict(await converse(true, { "x-forwarded-client-cert": XFCC(OTHER) }, { "connection.uri_san_peer_certificate": WEB })), "openai");
});
