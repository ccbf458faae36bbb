/** A free TCP port on 127.0.0.1: bound, read and released (fine on loopback, where nothing else races for it). */
import { once } from "node:events";
import { createServer } from "node:net";

export async function freePort(): Promise<number> {
  const probe = createServer().listen(0, "127.0.0.1");
  await once(probe, "listening");
  const address = probe.address();
  probe.close();
  await once(probe, "close");
  return typeof address === "object" && address ? address.port : 0;
}
