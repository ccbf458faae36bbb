import assert from "node:assert/strict";
import { test } from "node:test";
import { parseConfigText } from "../config/load.ts";
import { addressAllowed, isCidr } from "./cidr.ts";

test("isCidr: IPv4 and IPv6 ranges and single addresses; rejects the rest", () => {
  for (const good of ["10.0.0.0/8", "192.0.2.7", "0.0.0.0/0", "2001:db8::/32", "::1", "::/0", "fe80::/10"]) assert.ok(isCidr(good), good);
  for (const bad of ["10.0.0.0/33", "2001:db8::/129", "10.0.0/8", "10.0.0.0/", "10.0.0.0/-1", "example.com", "", "10.0.0.0/8/8", "::1/1e2"])
    assert.ok(!isCidr(bad), bad);
});

test("addressAllowed: inside and outside IPv4 ranges", () => {
  const list = ["10.0.0.0/8", "192.0.2.7"];
  assert.ok(addressAllowed(list, "10.200.3.4"));
  assert.ok(addressAllowed(list, "192.0.2.7"));
  assert.ok(!addressAllowed(list, "192.0.2.8"));
  assert.ok(!addressAllowed(list, "11.0.0.1"));
});

test("addressAllowed: IPv6 ranges, and IPv4-mapped IPv6 addresses against IPv4 ranges", () => {
  const list = ["2001:db8::/32", "10.0.0.0/8"];
  assert.ok(addressAllowed(list, "2001:db8:1::5"));
  assert.ok(!addressAllowed(list, "2001:db9::5"));
  assert.ok(addressAllowed(list, "::ffff:10.1.2.3"), "a dual-stack socket's view of an IPv4 peer");
  assert.ok(!addressAllowed(list, "::ffff:11.1.2.3"));
});

test("addressAllowed: something that is not an address is never allowed", () => {
  assert.ok(!addressAllowed(["0.0.0.0/0", "::/0"], "unknown"));
  assert.ok(!addressAllowed(["0.0.0.0/0"], ""));
});

test("config: an ip_allowlist entry that is not a CIDR is an error naming the field", () => {
  const loaded = parseConfigText("tenants:\n  - id: acme\n    ip_allowlist: [10.0.0.0/8, 10.0.0.0/40]\n", "gearbox.yaml");
  assert.ok(!loaded.ok);
  assert.match(loaded.errors.join("\n"), /gearbox\.yaml: tenants\[0\]\.ip_allowlist\[1\]: must be a CIDR/);
  assert.ok(parseConfigText("tenants:\n  - id: acme\n    ip_allowlist: [10.0.0.0/8, '2001:db8::/32', 192.0.2.1]\n", "gearbox.yaml").ok);
});
