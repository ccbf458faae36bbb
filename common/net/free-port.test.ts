import assert from "node:assert/strict";
import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
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

test("freePorts: drawn below the system's ephemeral range, where listen(0) and outgoing connections never land", async (t) => {
  const range = "/proc/sys/net/ipv4/ip_local_port_range";
  if (!existsSync(range)) return t.skip("no ip_local_port_range here");
  const first = Number(readFileSync(range, "utf8").trim().split(/\s+/)[0]);
  if (first - 20_000 < 1000) return t.skip(`the ephemeral range starts at ${first}`);
  const ports = await freePorts(50);
  assert.deepEqual(
    ports.filter((port) => port < 20_000 || port >= first),
    [],
  );
  // A draw that lands on a port someone listens on draws again.
  const held = createServer().listen(ports[0], "127.0.0.1");
  await once(held, "listening");
  t.after(() => held.close());
  const span = first - 20_000;
  const draws = [ports[0] as number, ports[1] as number].map((port) => (port - 20_000 + 0.5) / span);
  t.mock.method(Math, "random", () => draws.shift() ?? 0.5);
  assert.deepEqual(await freePorts(1), [ports[1]]);
});
