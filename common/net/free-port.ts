/** Free TCP ports on 127.0.0.1: bound, read and released (fine on loopback, where nothing else races for them). */
import { once } from "node:events";
import { createServer, type Server } from "node:net";

export async function freePort(): Promise<number> {
  return (await freePorts(1))[0] as number;
}

/**
 * `n` distinct free ports. Every probe is held until all are bound: released one by one, the
 * system may hand the same port out twice (seen: a bench's gateway refused "port is set twice").
 */
export async function freePorts(n: number): Promise<number[]> {
  const probes: Server[] = [];
  for (let i = 0; i < n; i++) {
    const probe = createServer().listen(0, "127.0.0.1");
    probes.push(probe);
    await once(probe, "listening");
  }
  const ports = probes.map((probe) => {
    const address = probe.address();
    return typeof address === "object" && address ? address.port : 0;
  });
  await Promise.all(probes.map((probe) => (probe.close(), once(probe, "close"))));
  return ports;
}
