import assert from "node:assert/strict";
import { test } from "node:test";
import { parseEndpointAddress } from "./endpoint.ts";

test("endpoint addresses are IP literals with a port, v6 in brackets", () => {
  assert.deepEqual(parseEndpointAddress("10.1.2.3:8088"), { ip: "10.1.2.3", port: 8088 });
  assert.deepEqual(parseEndpointAddress("[::1]:80"), { ip: "::1", port: 80 });
  for (const bad of ["host:80", "10.1.2.3", "10.1.2.3:0", "10.1.2.3:70000", "::1:80", "[10.1.2.3]:80"]) assert.equal(parseEndpointAddress(bad), undefined, bad);
});
