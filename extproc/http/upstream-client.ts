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

/** Sends one request; resolves with the response once its headers arrive. */
export function sendUpstream(url: URL, headers: Headers, body: Buffer, signal: AbortSignal): Promise<http.IncomingMessage> {
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
    req.end(body);
  });
}

/** Reads a whole response body. */
export async function readAll(res: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of res as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}
