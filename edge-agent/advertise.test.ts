import assert from "node:assert/strict";
import { test } from "node:test";
import { addressError } from "../common/registry/hello.ts";
import { advertiseAddressOf } from "./advertise.ts";

test("a bare node IP gets the port, IPv6 in brackets, and the result is an address the registry accepts", () => {
  assert.equal(advertiseAddressOf("10.0.3.7", 8088), "10.0.3.7:8088");
  assert.equal(advertiseAddressOf("2001:db8::7", 8088), "[2001:db8::7]:8088");
  for (const given of ["10.0.3.7", "2001:db8::7", "fd00::1"]) assert.equal(addressError(advertiseAddressOf(given, 8088)), undefined, given);
  // What "$(HOST_IP):8088" made of an IPv6 node: the registry refuses it.
  assert.notEqual(addressError("2001:db8::7:8088"), undefined);
});

test("an address with a port is taken as given", () => {
  assert.equal(advertiseAddressOf("10.0.3.7:9000", 8088), "10.0.3.7:9000");
  assert.equal(advertiseAddressOf("[2001:db8::7]:9000", 8088), "[2001:db8::7]:9000");
});
