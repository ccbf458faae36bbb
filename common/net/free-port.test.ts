import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer } from "node:net";
import { test } from "node:test";
import { freePort, freePorts } from "./free-port.ts";

test("freePorts: n distinct ports, each free to listen on afterwards", async () => {
  const ports = await freePorts(20);
  assert.equal(ports.length, 20);
  assert.equal(new Set(ports).size, 20);
  const servers = ports.map((port) => createServer().listen(port, "127.0.0.1"));
  await Promise.all(servers.map((server) => once(server, "listening")));
  await Promise.all(servers.map((server) => (server.close(), once(server, "close"))));
  assert.ok((await freePort()) > 0);
});
