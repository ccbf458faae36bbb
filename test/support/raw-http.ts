/** Raw bytes to an HTTP server, for requests no HTTP client would send (malformed ones). */
import { once } from "node:events";
import { connect } from "node:net";

/** Writes `bytes` on a fresh connection to 127.0.0.1:`port`; everything the server wrote until it closed the connection. */
export async function rawExchange(port: number, bytes: string): Promise<string> {
  const socket = connect(port, "127.0.0.1");
  const chunks: Buffer[] = [];
  socket.on("data", (c: Buffer) => chunks.push(c));
  socket.write(bytes);
  await once(socket, "close");
  return Buffer.concat(chunks).toString("utf8");
}
