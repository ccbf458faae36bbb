/**
 * The front door's upstream client: `node:http`/`https` with keep-alive agents shared by every
 * request, so calls to a provider reuse warm connections (TLS included).
 */
import http from "node:http";
import https from "node:https";
import type { Headers } from "../processor/outcome.ts";

const AGENT_OPTIONS = { keepAlive: true, keepAliveMsecs: 30_000, maxFreeSockets: 256 };
const httpAgent = new http.Agent(AGENT_OPTIONS);
const httpsAgent = new https.Agent(AGENT_OPTIONS);

/** Connection and first-byte deadlines of one call, and the error each becomes. */
export interface SendDeadlines {
  connectMs: number;
  firstByteMs: number;
  timeout(kind: "connect" | "first_byte"): Error;
}

/** Sends one request; resolves with the response once its headers arrive. */
export function sendUpstream(url: URL, headers: Headers, body: Buffer, signal: AbortSignal, deadlines?: SendDeadlines): Promise<http.IncomingMessage> {
  const secure = url.protocol === "https:";
  const request = secure ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: "POST",
      agent: secure ? httpsAgent : httpAgent,
      headers: { ...headers, "content-length": String(body.length) },
      signal,
    });
    req.once("response", resolve);
    req.once("error", reject);
    if (deadlines) watch(req, deadlines);
    req.end(body);
  });
}

/** Destroys `req` with the deadline's error when it cannot connect, or gets no answer, in time (a reused socket is connected). */
function watch(req: http.ClientRequest, deadlines: SendDeadlines): void {
  const firstByte = setTimeout(() => req.destroy(deadlines.timeout("first_byte")), deadlines.firstByteMs);
  req.once("response", () => clearTimeout(firstByte));
  req.once("close", () => clearTimeout(firstByte));
  req.once("socket", (socket) => {
    if (!socket.connecting) return;
    const connect = setTimeout(() => req.destroy(deadlines.timeout("connect")), deadlines.connectMs);
    socket.once("connect", () => clearTimeout(connect));
    socket.once("close", () => clearTimeout(connect));
  });
}

/** Reads a whole response body. */
export async function readAll(res: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk);
  return Buffer.concat(chunks);
}
