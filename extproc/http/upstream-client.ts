/**
 * The front door's upstream client: `node:http`/`https` with keep-alive agents shared by every
 * request, so calls to a provider reuse warm connections (TLS included).
 */
import http from "node:http";
import https from "node:https";
import { isIP, type Socket } from "node:net";
import type { Abortable } from "../../common/net/call-abort.ts";
import type { Headers } from "../processor/outcome.ts";

const AGENT_OPTIONS = { keepAlive: true, keepAliveMsecs: 30_000, maxFreeSockets: 256 };
const httpAgent = warmFirst(new http.Agent(AGENT_OPTIONS));
const httpsAgent = warmFirst(new https.Agent(AGENT_OPTIONS));

/** The parts of Node's `Agent` (documented but untyped, and `ClientRequest.onSocket`) the warm path uses. */
interface AgentParts {
  addRequest(req: http.ClientRequest, options: http.RequestOptions): void;
  getName(options: http.RequestOptions): string;
  reuseSocket(socket: Socket, req: http.ClientRequest): void;
  freeSockets: Record<string, Socket[] | undefined>;
  sockets: Record<string, Socket[] | undefined>;
}
type AsyncHandle = { asyncReset?(resource: object): void; getProviderType?(): number };

/**
 * Node's agent with a short warm path: a call to an origin with an idle connection takes it here,
 * as `Agent.prototype.addRequest` would, without that method's per-call copy of the options
 * and server-name normalisation (~4 % of the front door's CPU per request at one client, paired;
 * bench/RESULTS.md, issue 25). The pool's key is the agent's own `getName` of the request's
 * options — the same key Node files a freed socket under, as long as the options name the TLS
 * server themselves (`sendUpstream` does) — so a miss falls through to Node's method, which
 * connects, queues and counts as before.
 */
export function warmFirst<A extends http.Agent>(agent: A): A {
  const parts = agent as unknown as AgentParts;
  const nodeAddRequest = parts.addRequest.bind(parts);
  parts.addRequest = function addRequest(req, options) {
    const name = parts.getName(options);
    const free = parts.freeSockets[name];
    let socket: Socket | undefined;
    if (free !== undefined) {
      // LIFO, Node's default scheduling; a socket closed while idle has left the list already, but
      // one destroyed and not yet reported is skipped as Node skips it.
      do socket = free.pop();
      while (socket !== undefined && socket.destroyed);
      if (free.length === 0) delete parts.freeSockets[name];
    }
    if (socket === undefined) return nodeAddRequest(req, options);
    // As Node does for a reused socket: a fresh async resource (for async_hooks users), the socket
    // out of the free list's error handling and ref'd, then handed to the request.
    const handle = (socket as unknown as { _handle?: AsyncHandle })._handle;
    if (typeof handle?.asyncReset === "function" && typeof handle.getProviderType === "function") handle.asyncReset({ type: handle.getProviderType(), handle });
    parts.reuseSocket(socket, req);
    (req as unknown as { onSocket(socket: Socket): void }).onSocket(socket);
    (parts.sockets[name] ??= []).push(socket);
  };
  return agent;
}

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
      // Named here, not from a Host header by Node's agent: the warm path's pool key is the TLS
      // server's name as given (no SNI for an IP address, as Node decides).
      ...(target.secure && { servername: isIP(target.hostname) === 0 ? target.hostname : "" }),
      headers: headerList(target, headers, body.length),
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

/**
 * The request's header lines as Node takes them ready-made (name, value, name, value…): each
 * still validated as it is written, without `setHeader`'s map in between (~3 µs a call at one in
 * flight; bench/RESULTS.md, issue 25). As with `setHeader`, names are case-insensitive: one line
 * per name, the last value given. Node adds no `Host` to a list, so it is added here as Node
 * would: the host, bracketed when IPv6, with the port unless it is the scheme's default.
 */
function headerList(target: Destination, headers: Headers, length: number): string[] {
  const list: string[] = [];
  let host: string | undefined;
  // Where each lower-cased name's value sits in `list`: made only for a map with a capital in a
  // name (the processor's maps are lower-case; a caller's literal may not be).
  let at: Map<string, number> | undefined;
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    const key = name.toLowerCase();
    if (at === undefined && key !== name) at = indexOf(list);
    if (key === "host") host = value;
    else if (key === "content-length") continue;
    else if (at === undefined) list.push(name, value);
    else {
      const i = at.get(key);
      if (i !== undefined) list[i] = value;
      else {
        at.set(key, list.length + 1);
        list.push(name, value);
      }
    }
  }
  if (host === undefined) {
    host = target.hostname.includes(":") ? `[${target.hostname}]` : target.hostname;
    if (target.port !== (target.secure ? 443 : 80)) host += `:${target.port}`;
  }
  list.push("content-length", String(length), "host", host);
  return list;
}

/** The lower-cased names of a name/value list, each with its value's index. */
function indexOf(list: readonly string[]): Map<string, number> {
  const at = new Map<string, number>();
  for (let i = 0; i < list.length; i += 2) at.set((list[i] as string).toLowerCase(), i + 1);
  return at;
}

/** Reads a whole response body. */
export async function readAll(res: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk);
  return Buffer.concat(chunks);
}
