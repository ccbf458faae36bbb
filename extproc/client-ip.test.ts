import assert from "node:assert/strict";
import { test } from "node:test";
import { canonicalIp } from "./client-ip.ts";

void test("IPv4-mapped IPv6 becomes IPv4; other IPs stay as they are", () => {
  assert.equal(canonicalIp("::ffff:10.1.2.3"), "10.1.2.3");
  assert.equal(canonicalIp("::FFFF:192.168.0.1"), "192.168.0.1");
  assert.equal(canonicalIp("10.1.2.3"), "10.1.2.3");
  assert.equal(canonicalIp("2001:db8::1"), "2001:db8::1");
  assert.equal(canonicalIp("::ffff:a01:203"), "::ffff:a01:203", "hex-spelled mapped form is left alone");
});

void test("what is not an IP gives no address", () => {
  assert.equal(canonicalIp(undefined), undefined);
  assert.equal(canonicalIp(""), undefined);
  assert.equal(canonicalIp("/var/run/envoy.sock"), undefined);
  assert.equal(canonicalIp("10.1.2.3:80"), undefined);
});
