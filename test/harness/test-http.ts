/**
 * Test helpers around the harness: a recording HTTP upstream and a small HTTP/1.1 client that
 * returns raw status, headers and bytes (or the reset it ran into).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

/** A request as the upstream received it. */
export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** Answers a recorded request; the default echoes the body back. */
export type UpstreamHandler = (request: RecordedRequest, res: http.ServerResponse) => void | Promise<void>;

/** A running upstream. */
export interface TestUpstream {
  url: string;
  port: number;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** Echo: 200, the request body back, with `x-upstream: <name>` and the request's content-type. */
export function echo(name: string): (request: RecordedRequest, res: http.ServerResponse) => void {
  return (request, res) => {
    res.writeHead(200, {
      "content-type": request.headers["content-type"] ?? "application/octet-stream",
      "content-length": String(request.body.length),
      "x-upstream": name,
    });
    res.end(request.body);
  };
}

/** Starts an HTTP upstream on 127.0.0.1 that records every request, then runs `handler`. */
export async function startUpstream(name: string, handler: UpstreamHandler = echo(name)): Promise<TestUpstream> {
  const requests: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (chunk: Buffer) => parts.push(chunk));
    req.on("end", () => {
      const request = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(parts) };
      requests.push(request);
      void Promise.resolve(handler(request, res)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = portOf(server.address());
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What the client saw. */
export interface ClientResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The client's port on its connection (the downstream remote port, for Envoy). */
  localPort: number;
}

/** Options of `send`. */
export interface SendOptions {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  /** Body parts, written in order with `gapMs` between them (chunked unless content-length is set). */
  body?: Buffer[];
  gapMs?: number;
}

/** Sends one request on a fresh connection; rejects if the stream is reset. */
export function send(url: string, options: SendOptions = {}): Promise<ClientResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}${options.path ?? "/"}`, { method: options.method ?? "POST", headers: options.headers, agent: false }, (res) => {
      const parts: Buffer[] = [];
      const localPort = res.socket.localPort ?? 0;
      res.on("data", (chunk: Buffer) => parts.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts), localPort }));
      res.on("error", reject);
      res.on("aborted", () => reject(new Error("response aborted")));
    });
    req.on("error", reject);
    void (async () => {
      const parts = options.body ?? [];
      for (const [i, part] of parts.entries()) {
        if (i > 0 && options.gapMs !== undefined) await new Promise((r) => setTimeout(r, options.gapMs));
        req.write(part);
      }
      req.end();
    })();
  });
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The port of a listening TCP server's address. */
function portOf(address: AddressInfo | string | null): number {
  if (address === null || typeof address === "string") throw new Error("server is not listening on TCP");
  return address.port;
}
