import assert from "node:assert/strict";
import { test } from "node:test";
import type { ProcessingRequest, ProcessingRequest__Output } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingRequest.ts";
import type { Value } from "../../proto/generated/google/protobuf/Value.ts";
import { extProcPackage } from "../../common/envoy/protos.ts";
import { clientIdentityOf, EXT_PROC_ATTRIBUTES_KEY, ipOfEnvoyAddress } from "./attributes.ts";

const SPIFFE = "spiffe://cluster.local/ns/shop/sa/web";

/** `request` as the server receives it: encoded and decoded with the service's own codec. */
function overTheWire(request: ProcessingRequest): ProcessingRequest__Output {
  const method = extProcPackage().envoy.service.ext_proc.v3.ExternalProcessor.service.Process;
  return method.requestDeserialize(method.requestSerialize(request));
}

/** A request_headers message with `fields` as Envoy's attribute Struct under `key`. */
function headersWith(fields: Record<string, Value> | undefined, key = EXT_PROC_ATTRIBUTES_KEY): ProcessingRequest__Output {
  return overTheWire({
    request_headers: { headers: { headers: [{ key: ":path", raw_value: Buffer.from("/v1/chat/completions") }] } },
    ...(fields === undefined ? {} : { attributes: { [key]: { fields } } }),
  });
}

void test("ipOfEnvoyAddress drops the port of Envoy's ip:port spelling", () => {
  assert.equal(ipOfEnvoyAddress("10.0.0.7:51234"), "10.0.0.7");
  assert.equal(ipOfEnvoyAddress("[2001:db8::1]:443"), "2001:db8::1");
  assert.equal(ipOfEnvoyAddress("[::ffff:10.0.0.7]:443"), "10.0.0.7");
});

void test("ipOfEnvoyAddress gives nothing for addresses that are not IPs, or malformed", () => {
  for (const value of ["/var/run/app.sock", "envoy://internal_client_address/", "10.0.0.7", "host.example:80", "[2001:db8::1]", "1.2.3.4:x", ""]) {
    assert.equal(ipOfEnvoyAddress(value), undefined, value);
  }
});

void test("the caller's IP and SPIFFE ID come from the filter's attribute Struct", () => {
  const message = headersWith({
    "source.address": { stringValue: "10.0.0.7:51234" },
    "connection.uri_san_peer_certificate": { stringValue: SPIFFE },
  });
  assert.deepEqual(clientIdentityOf(message), { address: "10.0.0.7", principal: SPIFFE });
});

void test("an IPv6 caller without a client certificate has an address and no principal", () => {
  assert.deepEqual(clientIdentityOf(headersWith({ "source.address": { stringValue: "[2001:db8::9]:40000" } })), { address: "2001:db8::9" });
});

void test("no attributes, attributes of another filter, or values that are not usable give nothing", () => {
  assert.deepEqual(clientIdentityOf(headersWith(undefined)), {});
  assert.deepEqual(clientIdentityOf(headersWith({ "source.address": { stringValue: "10.0.0.7:1" } }, "envoy.filters.http.ext_authz")), {});
  assert.deepEqual(clientIdentityOf(headersWith({})), {});
  const unusable = headersWith({
    "source.address": { numberValue: 167772167 },
    "connection.uri_san_peer_certificate": { stringValue: "" },
  });
  assert.deepEqual(clientIdentityOf(unusable), {});
});
