/**
 * An OpenAI-compatible upstream for tests: a real HTTP server on 127.0.0.1 that replays recorded
 * provider traffic from `test/fixtures/`, so no test ever calls a real provider.
 *
 * - `POST /v1/chat/completions` replays the next queued fixture (else the default one): with
 *   `"stream": true` its `.chunks.txt` (or raw `.sse`) as a paced SSE stream, otherwise its
 *   `.json` body, with the queued status and headers (error fixtures replay as JSON).
 * - `POST /v1/embeddings` replays a fixture queued for `endpoint: "embeddings"`, else answers
 *   with a synthesized, deterministic response (see `embeddings.ts`: nothing was recorded).
 * - `GET /v1/models` lists `options.models` (synthesized).
 *
 * Every request is recorded (also rejected ones), and streams the client left are counted.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { hasFixture, loadChunkLines, loadSseEvents, readFixtureBytes } from "./fixtures.ts";
import { parseEmbeddingsRequest, synthesizeEmbeddings } from "./embeddings.ts";
import { emulatorMisuse, invalidApiKey, invalidJson, invalidUrl, missingApiKey, type UpstreamError } from "./openai-errors.ts";
import { chunkLinesToSseEvents, DEFAULT_PACING, planSseWrites, writePaced, type StreamOutcome, type StreamPacing } from "./sse.ts";
import { AbortCounter, closeServer, parseJson, readBody } from "./http-helpers.ts";

/** Endpoints that consume queued fixtures. */
export type QueueEndpoint = "chat" | "embeddings";

/** One response to replay, consumed by the next request to its endpoint. */
export interface QueuedResponse {
  /** Fixture name under `test/fixtures/`, without extension: `"vercel-ai/openai/openai-text"`. */
  fixture: string;
  /** Which endpoint's next request gets it. Default `"chat"`. */
  endpoint?: QueueEndpoint;
  /** HTTP status. Default 200. At 400 and above the `.json` body is sent, even to a stream request. */
  status?: number;
  /** Extra response headers, e.g. `{ "retry-after": "7" }`; they override the defaults. */
  headers?: Record<string, string>;
  /** Pacing for this response's stream, over the emulator's. */
  pacing?: Partial<StreamPacing>;
}

/** A request as it reached the upstream. */
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

/** Construction options; all optional. */
export interface OpenAIUpstreamOptions {
  /** When set, requests must carry `Authorization: Bearer <apiKey>`, or get OpenAI's 401. */
  apiKey?: string;
  /** Chat fixture replayed when nothing is queued. Default `"vercel-ai/openai/openai-text"`. */
  defaultChatFixture?: string;
  /** Default pacing of streams. */
  pacing?: Partial<StreamPacing>;
  /** Model ids listed by `GET /v1/models`. */
  models?: string[];
}

/** A running emulator. */
export interface OpenAIUpstream {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** `url` + `/v1`, what the OpenAI SDK takes as `baseURL`. */
  readonly baseURL: string;
  readonly port: number;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Streams whose client disconnected before the end. */
  readonly aborted: number;
  /** Queued responses not yet consumed. */
  readonly pending: number;
  /** Queues responses; throws at once if a fixture has no recorded form the endpoint can use. */
  queue(...responses: QueuedResponse[]): void;
  /** Resolves once `aborted` reaches `count` (default 1); rejects after `timeoutMs` (default 2000). */
  waitForAborted(count?: number, timeoutMs?: number): Promise<void>;
  /** Drops open connections and stops listening. */
  close(): Promise<void>;
}

type Route = "chat" | "embeddings" | "models";

const DEFAULT_MODELS = ["gpt-4.1-nano-2025-04-14", "text-embedding-3-small", "text-embedding-3-large"];

function routeOf(method: string, path: string): Route | undefined {
  if (method === "POST" && path === "/v1/chat/completions") return "chat";
  if (method === "POST" && path === "/v1/embeddings") return "embeddings";
  if (method === "GET" && path === "/v1/models") return "models";
  return undefined;
}

function sendBytes(res: ServerResponse, status: number, headers: Record<string, string>, body: Buffer): void {
  res.writeHead(status, { "content-type": "application/json", ...headers, "content-length": String(body.length) });
  res.end(body);
}

function sendError(res: ServerResponse, error: UpstreamError, headers: Record<string, string>): void {
  sendBytes(res, error.status, headers, Buffer.from(JSON.stringify(error.body)));
}

function checkAuth(apiKey: string | undefined, authorization: string | undefined): UpstreamError | undefined {
  if (apiKey === undefined) return undefined;
  const presented = authorization?.match(/^Bearer\s+(.+)$/i)?.[1];
  if (presented === undefined) return missingApiKey();
  return presented === apiKey ? undefined : invalidApiKey(presented);
}

function streamEvents(fixture: string): string[] | undefined {
  if (hasFixture(fixture, "chunks")) return chunkLinesToSseEvents(loadChunkLines(fixture));
  if (hasFixture(fixture, "sse")) return loadSseEvents(fixture);
  return undefined;
}

/** Starts an emulator on 127.0.0.1 and a free port. */
export async function startOpenAIUpstream(options: OpenAIUpstreamOptions = {}): Promise<OpenAIUpstream> {
  const defaultChatFixture = options.defaultChatFixture ?? "vercel-ai/openai/openai-text";
  const basePacing: StreamPacing = { ...DEFAULT_PACING, ...options.pacing };
  const queues: Record<QueueEndpoint, QueuedResponse[]> = { chat: [], embeddings: [] };
  const requests: RecordedRequest[] = [];
  const aborts = new AbortCounter();
  let served = 0;

  async function replayChat(res: ServerResponse, record: RecordedRequest, base: Record<string, string>): Promise<void> {
    const entry = queues.chat.shift() ?? { fixture: defaultChatFixture };
    record.fixture = entry.fixture;
    const status = entry.status ?? 200;
    const headers = { ...base, ...entry.headers };
    const wantsStream = typeof record.json === "object" && record.json !== null && (record.json as { stream?: unknown }).stream === true;
    if (!wantsStream || status >= 400) {
      if (!hasFixture(entry.fixture, "json")) return sendError(res, emulatorMisuse(`fixture ${entry.fixture} has no .json`), base);
      return sendBytes(res, status, headers, readFixtureBytes(entry.fixture, "json"));
    }
    const events = streamEvents(entry.fixture);
    if (events === undefined) return sendError(res, emulatorMisuse(`fixture ${entry.fixture} has no .chunks.txt or .sse`), base);
    const pacing: StreamPacing = { ...basePacing, ...entry.pacing };
    res.writeHead(status, { "content-type": "text/event-stream", "cache-control": "no-cache", ...headers });
    res.flushHeaders();
    res.socket?.setNoDelay(true);
    const outcome = await writePaced(res, planSseWrites(events, pacing), pacing.delayMs);
    record.stream = outcome;
    if (outcome.aborted) {
      aborts.increment();
    }
  }

  function answerEmbeddings(res: ServerResponse, record: RecordedRequest, base: Record<string, string>): void {
    const entry = queues.embeddings.shift();
    if (entry !== undefined) {
      record.fixture = entry.fixture;
      return sendBytes(res, entry.status ?? 200, { ...base, ...entry.headers }, readFixtureBytes(entry.fixture, "json"));
    }
    const parsed = parseEmbeddingsRequest(record.json);
    if (!parsed.ok) return sendError(res, parsed.error, base);
    sendBytes(res, 200, base, Buffer.from(JSON.stringify(synthesizeEmbeddings(parsed.value))));
  }

  function listModels(res: ServerResponse, base: Record<string, string>): void {
    const data = (options.models ?? DEFAULT_MODELS).map((id) => ({ id, object: "model", created: 1700000000, owned_by: "system" }));
    sendBytes(res, 200, base, Buffer.from(JSON.stringify({ object: "list", data })));
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const url = req.url ?? "/";
    const method = req.method ?? "GET";
    const path = url.split("?")[0] ?? "/";
    const record: RecordedRequest = { method, path, url, headers: req.headers, body, json: parseJson(body) };
    requests.push(record);
    served += 1;
    const base = { "x-request-id": `req_emulator_${served}` };
    const authError = checkAuth(options.apiKey, req.headers.authorization);
    if (authError !== undefined) return sendError(res, authError, base);
    const route = routeOf(method, path);
    if (route === undefined) return sendError(res, invalidUrl(method, path), base);
    if (route !== "models" && record.json === undefined) return sendError(res, invalidJson(), base);
    switch (route) {
      case "chat":
        return replayChat(res, record, base);
      case "embeddings":
        return answerEmbeddings(res, record, base);
      case "models":
        return listModels(res, base);
      default: {
        const never: never = route;
        throw new Error(`Unhandled route ${String(never)}`);
      }
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) res.destroy(err instanceof Error ? err : new Error(String(err)));
      else sendError(res, emulatorMisuse(err instanceof Error ? err.message : String(err)), {});
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    baseURL: `${url}/v1`,
    port,
    requests,
    get aborted() {
      return aborts.count;
    },
    get pending() {
      return queues.chat.length + queues.embeddings.length;
    },
    queue(...responses) {
      for (const response of responses) {
        const endpoint = response.endpoint ?? "chat";
        const usable = hasFixture(response.fixture, "json") || (endpoint === "chat" && streamEvents(response.fixture) !== undefined);
        if (!usable) throw new Error(`Fixture ${response.fixture} has no recorded form usable by the ${endpoint} endpoint`);
        queues[endpoint].push(response);
      }
    },
    waitForAborted(count = 1, timeoutMs = 2000) {
      return aborts.waitFor(count, timeoutMs);
    },
    close() {
      return closeServer(server);
    },
  };
}
