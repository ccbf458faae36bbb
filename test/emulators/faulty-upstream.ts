/**
 * An OpenAI chat upstream that fails on demand, for the fault suite (`test/faults/`,
 * `bench/faults.ts`): a real HTTP server on 127.0.0.1 whose behaviour is one `Fault` value,
 * switched at run time.
 *
 * - `none`: the recorded answer (`vercel-ai/openai/openai-text`: `.json`, or `.chunks.txt` as SSE
 *   when the request asks for `"stream": true`);
 * - `status`: OpenAI's error body with that status (429 with `retry-after`, 500…), to every call
 *   or to a `fraction` of them (deterministic: exactly ⌊n·fraction⌋ of the first n calls fail);
 * - `hang-after-headers`: 200 and the headers, then not one byte until the client leaves;
 * - `drip`: the answer `bytesPerWrite` bytes (default 1) every `delayMs` (a slow provider);
 * - `reset`: the answer's first `afterBytes` bytes, then a TCP reset (mid-stream for SSE, mid-body
 *   for JSON).
 *
 * `refuse()` closes the listener (new connections are refused, open ones dropped) and `accept()`
 * listens again on the same port. Every call is counted by what it was answered with.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { freePort } from "../../common/net/free-port.ts";
import { loadChunkLines, readFixtureBytes } from "./fixtures.ts";
import { closeServer, parseJson, readBody } from "./http-helpers.ts";
import { chunkLinesToSseEvents } from "./sse.ts";

/** What the upstream does with each call. */
export type Fault =
  | { kind: "none" }
  | { kind: "status"; status: number; retryAfterSeconds?: number; fraction?: number }
  | { kind: "hang-after-headers" }
  | { kind: "drip"; delayMs: number; bytesPerWrite?: number }
  | { kind: "reset"; afterBytes: number };

/** How one call was answered: `ok`, the error status (`"429"`), `hang`, `drip` or `reset`. */
export type Answer = "ok" | "hang" | "drip" | "reset" | `${number}`;

export interface FaultyUpstream {
  /** `http://127.0.0.1:<port>`; `baseURL` adds `/v1`. */
  readonly url: string;
  readonly baseURL: string;
  readonly port: number;
  /** Calls received (every request to any path), since start or `resetCounts()`. */
  readonly calls: number;
  /** Calls by how they were answered. */
  readonly answers: Readonly<Partial<Record<Answer, number>>>;
  /** The `authorization` header of the last call (to check what credential reached the provider). */
  readonly lastAuthorization: string | undefined;
  /** Switches behaviour for the calls that arrive from now on. */
  setFault(fault: Fault): void;
  resetCounts(): void;
  /** Stops listening and drops open connections: connections are refused until `accept()`. */
  refuse(): Promise<void>;
  /** Listens again on the same port. */
  accept(): Promise<void>;
  close(): Promise<void>;
}

const FIXTURE = "vercel-ai/openai/openai-text";

function errorBody(status: number): Buffer {
  const [type, code, message] =
    status === 429
      ? ["requests", "rate_limit_exceeded", "Rate limit reached for requests (fault emulator)."]
      : ["server_error", null, "The server had an error while processing your request (fault emulator)."];
  return Buffer.from(JSON.stringify({ error: { message, type, param: null, code } }));
}

function wantsStream(json: unknown): boolean {
  return typeof json === "object" && json !== null && (json as { stream?: unknown }).stream === true;
}

/** The recorded answer: body bytes and content type. */
function answerBytes(stream: boolean): { type: string; body: Buffer } {
  if (!stream) return { type: "application/json", body: readFixtureBytes(FIXTURE, "json") };
  return { type: "text/event-stream", body: Buffer.from(chunkLinesToSseEvents(loadChunkLines(FIXTURE)).join("")) };
}

/** Whether call number `n` (1-based) of a fraction-`f` fault fails: exactly ⌊n·f⌋ of the first n do. */
function failsAt(n: number, fraction: number): boolean {
  return Math.floor(n * fraction) > Math.floor((n - 1) * fraction);
}

async function drip(res: ServerResponse, body: Buffer, delayMs: number, bytesPerWrite: number): Promise<void> {
  for (let i = 0; i < body.length; i += bytesPerWrite) {
    if (res.destroyed) return;
    res.write(body.subarray(i, i + bytesPerWrite));
    await sleep(delayMs);
  }
  res.end();
}

/** Starts the upstream on 127.0.0.1 and a free port, answering normally. */
export async function startFaultyUpstream(initial: Fault = { kind: "none" }): Promise<FaultyUpstream> {
  let fault = initial;
  let calls = 0;
  let statusCalls = 0;
  let lastAuthorization: string | undefined;
  let answers: Partial<Record<Answer, number>> = {};
  const count = (answer: Answer): void => {
    answers[answer] = (answers[answer] ?? 0) + 1;
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const json = parseJson(await readBody(req));
    calls += 1;
    lastAuthorization = req.headers.authorization;
    const current = fault;
    const { type, body } = answerBytes(wantsStream(json));
    const headers = { "content-type": type, "x-request-id": `req_faulty_${calls}` };
    switch (current.kind) {
      case "none":
        count("ok");
        res.writeHead(200, { ...headers, "content-length": String(body.length) });
        res.end(body);
        return;
      case "status": {
        statusCalls += 1;
        if (!failsAt(statusCalls, current.fraction ?? 1)) {
          count("ok");
          res.writeHead(200, { ...headers, "content-length": String(body.length) });
          res.end(body);
          return;
        }
        count(`${current.status}`);
        const error = errorBody(current.status);
        const retryAfter = current.retryAfterSeconds !== undefined ? { "retry-after": String(current.retryAfterSeconds) } : {};
        res.writeHead(current.status, { "content-type": "application/json", ...retryAfter, "content-length": String(error.length) });
        res.end(error);
        return;
      }
      case "hang-after-headers":
        count("hang");
        res.writeHead(200, headers);
        res.flushHeaders();
        return;
      case "drip":
        count("drip");
        res.writeHead(200, headers);
        res.flushHeaders();
        return drip(res, body, current.delayMs, Math.max(1, current.bytesPerWrite ?? 1));
      case "reset": {
        count("reset");
        res.writeHead(200, headers);
        res.write(body.subarray(0, Math.min(current.afterBytes, body.length - 1)));
        // Let the bytes leave, then reset the connection (RST, not FIN).
        await sleep(20);
        res.socket?.resetAndDestroy();
        return;
      }
      default: {
        const never: never = current;
        throw new Error(`Unhandled fault ${JSON.stringify(never)}`);
      }
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => res.destroy(err instanceof Error ? err : new Error(String(err))));
  });
  const listen = (port: number): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  // Below the ephemeral range (freePort), so that while it refuses no other listen(0) takes its port.
  await listen(await freePort());
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  let listening = true;

  return {
    url,
    baseURL: `${url}/v1`,
    port,
    get calls() {
      return calls;
    },
    get answers() {
      return answers;
    },
    get lastAuthorization() {
      return lastAuthorization;
    },
    setFault(next) {
      fault = next;
      statusCalls = 0;
    },
    resetCounts() {
      calls = 0;
      answers = {};
    },
    async refuse() {
      if (!listening) return;
      listening = false;
      await closeServer(server);
    },
    async accept() {
      if (listening) return;
      await listen(port);
      listening = true;
    },
    async close() {
      if (listening) await closeServer(server);
      listening = false;
    },
  };
}
