/**
 * Free TCP ports on 127.0.0.1 for a process that will listen on them a little later (the demo's
 * and the tests' child processes, the benches).
 *
 * They are drawn from below the system's ephemeral range: a port that `listen(0)` handed out and
 * the probe released goes back to that range, where any other process's `listen(0)` or outgoing
 * connection may take it before its owner binds it again (seen in CI: a test's "unreachable"
 * port answered by another test file's server). Below the range only another caller of this
 * module can take it, and it draws at random from thousands of ports.
 */
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";

/** Lowest port drawn: above the registered services most machines run (databases, caches, brokers). */
const LOWEST = 20_000;
/** Draws per port before falling back to a port from the system's ephemeral range. */
const DRAWS = 20;

/** First port of Linux's ephemeral range (`ip_local_port_range`); 32,768 where there is none to read. */
function ephemeralStart(): number {
  try {
    const first = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(first) && first > 0 ? first : 32_768;
  } catch {
    return 32_768;
  }
}

export async function freePort(): Promise<number> {
  return (await freePorts(1))[0] as number;
}

/** A listening probe on `port` (0: the system's choice), or `undefined` when the port is taken. */
async function probe(port: number): Promise<Server | undefined> {
  const server = createServer();
  server.listen(port, "127.0.0.1");
  try {
    await Promise.race([once(server, "listening"), once(server, "error").then(([err]) => Promise.reject(err as Error))]);
    return server;
  } catch {
    server.close();
    return undefined;
  }
}

/**
 * `n` distinct free ports. Every probe is held until all are bound: released one by one, the
 * system may hand the same port out twice (seen: a bench's gateway refused "port is set twice").
 */
export async function freePorts(n: number): Promise<number[]> {
  const highest = ephemeralStart() - 1;
  const probes: Server[] = [];
  for (let i = 0; i < n; i++) {
    let held: Server | undefined;
    for (let draw = 0; draw < DRAWS && !held && highest - LOWEST >= 1000; draw++) {
      held = await probe(LOWEST + Math.floor(Math.random() * (highest - LOWEST + 1)));
    }
    held ??= await probe(0);
    if (!held) throw new Error("no free TCP port on 127.0.0.1");
    probes.push(held);
  }
  const ports = probes.map((server) => {
    const address = server.address();
    return typeof address === "object" && address ? address.port : 0;
  });
  await Promise.all(probes.map((server) => (server.close(), once(server, "close"))));
  return ports;
}
