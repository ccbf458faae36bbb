/**
 * What every provider emulator shares, so each one only states its provider's routes, checks
 * and error shapes: a real HTTP server on 127.0.0.1 and a free port; every request recorded
 * (rejected ones too) in one shape, `RecordedRequest`; replay of a fixture's bytes or of a paced
 * stream, with streams the client left counted; one public face (`UpstreamEmulator`).
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { AbortCounter, closeServer, parseJson, readBody } from "./http-helpers.ts";
import { writePaced, type StreamOutcome } from "./sse.ts";

/** A request as it reached an emulator. */
export interface RecordedRequest {
  method: string;
  /** Path without query string, e.g. `/v1/chat/completions`. */
  path: string;
  /** Path with query string, as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  /** Raw body bytes. */
  body: Buffer;
  /** Parsed body when it is JSON, else `undefined`. */
  json: unknown;
  /** The fixture replayed, once chosen. */
  fixture?: string;
  /** For a streamed answer: filled in when the stream ends or the client leaves. */
  stream?: StreamOutcome;
}

/** The members every running emulator has. */
export interface UpstreamEmulator<R extends RecordedRequest = RecordedRequest> {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** What a Gearbox provider takes as `base_url`. */
  readonly baseURL: string;
  readonly port: number;
  /** Every request received, in order. */
  readonly requests: R[];
  /** Streams whose client disconnected before the end. */
  readonly aborted: number;
  /** Queued responses not yet consumed. */
  readonly pending: number;
  /** Resolves once `aborted` reaches `count` (default 1); rejects after `timeoutMs` (default 2000). */
  waitForAborted(count?: number, timeoutMs?: number): Promise<void>;
  /** Drops open connections and stops listening. */
  close(): Promise<void>;
}

/** What a provider emulator supplies to the base. */
export interface EmulatorSpec<R extends RecordedRequest> {
  /** Answers one recorded request (already in `requests`); `served` counts requests from 1. */
  handle(record: R, res: ServerResponse, context: { served: number; aborts: AbortCounter }): Promise<void> | void;
  /** Answers a failure of `handle` before any header went out, in the provider's error shape. */
  misuse(res: ServerResponse, message: string): void;
  /** Adds provider fields to a record (Gemini's model and action). */
  extend?(record: RecordedRequest): R;
}

/** A started server, before the emulator adds its own members. */
export interface RunningEmulator<R extends RecordedRequest> {
  readonly url: string;
  readonly port: number;
  readonly requests: R[];
  readonly aborts: AbortCounter;
  readonly server: Server;
}

function recordOf(req: IncomingMessage, body: Buffer): RecordedRequest {
  const url = req.url ?? "/";
  return { method: req.method ?? "GET", path: url.split("?")[0] ?? "/", url, headers: req.headers, body, json: parseJson(body) };
}

/** Starts the server on 127.0.0.1 and a free port; every request is read, recorded, then handled. */
export async function startEmulator<R extends RecordedRequest>(spec: EmulatorSpec<R>): Promise<RunningEmulator<R>> {
  const requests: R[] = [];
  const aborts = new AbortCounter();
  let served = 0;
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const plain = recordOf(req, await readBody(req));
    const record = spec.extend ? spec.extend(plain) : (plain as R);
    requests.push(record);
    served += 1;
    await spec.handle(record, res, { served, aborts });
  }
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) res.destroy(err instanceof Error ? err : new Error(String(err)));
      else spec.misuse(res, err instanceof Error ? err.message : String(err));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, port, requests, aborts, server };
}

/** The public face: the shared members, then the emulator's own (`queue`, extra URLs). */
export function emulatorApi<R extends RecordedRequest, T extends object>(
  running: RunningEmulator<R>,
  face: { baseURL: string; pending: () => number },
  own: T,
): UpstreamEmulator<R> & T {
  const shared: UpstreamEmulator<R> = {
    url: running.url,
    baseURL: face.baseURL,
    port: running.port,
    requests: running.requests,
    get aborted() {
      return running.aborts.count;
    },
    get pending() {
      return face.pending();
    },
    waitForAborted(count = 1, timeoutMs = 2000) {
      return running.aborts.waitFor(count, timeoutMs);
    },
    close() {
      return closeServer(running.server);
    },
  };
  return Object.assign(shared, own);
}

/** Sends a whole body with its length; `headers` override the content type. */
export function sendBytes(res: ServerResponse, status: number, contentType: string, headers: Record<string, string>, body: Buffer): void {
  res.writeHead(status, { "content-type": contentType, ...headers, "content-length": String(body.length) });
  res.end(body);
}

/**
 * Sends a stream's planned writes, paced, with headers flushed first and Nagle off; records the
 * outcome on the request and counts a client that left.
 */
export async function replayPaced(
  res: ServerResponse,
  record: RecordedRequest,
  aborts: AbortCounter,
  head: { status: number; headers: Record<string, string> },
  writes: readonly Buffer[],
  delayMs: number,
): Promise<void> {
  res.writeHead(head.status, head.headers);
  res.flushHeaders();
  res.socket?.setNoDelay(true);
  record.stream = await writePaced(res, writes, delayMs);
  if (record.stream.aborted) aborts.increment();
}
