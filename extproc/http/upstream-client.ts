/**
 * The front door's upstream client: `node:http`/`https` with keep-alive agents shared by every
 * request, so calls to a provider reuse warm connections (TLS included).
 */
import http from "node:http";
import https from "node:https";
import type { Abortable } from "../../common/net/call-abort.ts";
import type { Headers } from "../processor/outcome.ts";

const AGENT_OPTIONS = { keepAlive: true, keepAliveMsecs: 30_000, maxFreeSockets: 256 };
const httpAgent = new http.Agent(AGENT_OPTIONS);
const httpsAgent = new https.Agent(AGENT_OPTIONS);

/** Where a call goes, already split as `http.request` takes it (no URL parsed per call). */
export interface Destination {
  secure: boolean;
  hostname: string;
  port: number;
  /** Path and query. */
  path: string;
}

/** `path` (with its query) on `origin`'s scheme, host and port. */
export function destination(origin: URL, path: string): Destination {
  const secure = origin.protocol === "https:";
  const host = origin.hostname;
  return {
    secure,
    hostname: host.startsWith("[") ? host.slice(1, -1) : host,
    port: origin.port === "" ? (secure ? 443 : 80) : Number(origin.port),
    path,
  };
}

/** Connection and first-byte deadlines of one call, and the error each becomes. */
export interface SendDeadlines {
  connectMs: number;
  firstByteMs: number;
  timeout(kind: "connect" | "first_byte"): Error;
}

/**
 * Sends one request; resolves with the response once its headers arrive. `signal` aborting
 * destroys the call (its response too) with the signal's reason; so do the deadlines, with
 * theirs. One listener per event on the request, removed with it: no `signal` option, whose
 * end-of-stream watcher costs several listeners per call.
 */
export function sendUpstream(
  to: URL | Destination,
  headers: Headers,
  body: Buffer,
  signal: Abortable,
  deadlines?: SendDeadlines,
): Promise<http.IncomingMessage> {
  const target = to instanceof URL ? destination(to, to.pathname + to.search) : to;
  const request = target.secure ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const aborted = () => (signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
    if (signal.aborted) return reject(aborted());
    const req = request({
      hostname: target.hostname,
      port: target.port,
      path: target.path,
      method: "POST",
      agent: target.secure ? httpsAgent : httpAgent,
      // Not `{ ...headers, key }`: a key after a leading spread costs ~1 µs on Node 20 (cloud-request.ts).
      headers: Object.assign({}, headers, { "content-length": String(body.length) }),
    });
    const onAbort = () => req.destroy(aborted());
    signal.addEventListener("abort", onAbort, { once: true });
    let firstByte: NodeJS.Timeout | undefined;
    if (deadlines) {
      firstByte = setTimeout(() => req.destroy(deadlines.timeout("first_byte")), deadlines.firstByteMs);
      req.on("socket", (socket) => {
        if (!socket.connecting) return;
        const connect = setTimeout(() => req.destroy(deadlines.timeout("connect")), deadlines.connectMs);
        socket.once("connect", () => clearTimeout(connect));
        socket.once("close", () => clearTimeout(connect));
      });
    }
    // `on`, not `once` (a wrapper per listener): a request emits `socket`, `response` and `close` once each,
    // and a second `error` must find a listener rather than crash the process.
    req.on("response", (res: http.IncomingMessage) => {
      clearTimeout(firstByte);
      resolve(res);
    });
    req.on("error", reject);
    // The request and its response are one: closed (answered, failed or aborted), nothing is left to abort.
    req.on("close", () => {
      clearTimeout(firstByte);
      signal.removeEventListener("abort", onAbort);
    });
    req.end(body);
  });
}

/** Reads a whole response body. */
export async function readAll(res: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk);
  return Buffer.concat(chunks);
}
