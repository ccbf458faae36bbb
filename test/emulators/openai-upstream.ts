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
import type { ServerResponse } from "node:http";
import { emulatorApi, replayPaced, sendBytes as send, startEmulator, type RecordedRequest, type UpstreamEmulator } from "./emulator-base.ts";
import { hasFixture, loadChunkLines, loadSseEvents, readFixtureBytes } from "./fixtures.ts";
import { parseEmbeddingsRequest, synthesizeEmbeddings } from "./embeddings.ts";
import type { AbortCounter } from "./http-helpers.ts";
import { emulatorMisuse, invalidApiKey, invalidJson, invalidUrl, missingApiKey, type UpstreamError } from "./openai-errors.ts";
import { chunkLinesToSseEvents, DEFAULT_PACING, planSseWrites, type StreamPacing } from "./sse.ts";

export type { RecordedRequest } from "./emulator-base.ts";

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

/** Construction options; all optional. */
export interface OpenAIUpstreamOptions {
  /** When set, requests must carry `Authorization: Bearer <apiKey>`, or get OpenAI's 401. */
  apiKey?: string;
  /** Chat fixture replayed when nothing is queued. Default `"vercel-ai/openai/openai-text"`. */
  defaultFixture?: string;
  /** Default pacing of streams. */
  pacing?: Partial<StreamPacing>;
  /** Model ids listed by `GET /v1/models`. */
  models?: string[];
}

/** A running emulator; `baseURL` (`url` + `/v1`) is also what the OpenAI SDK takes as `baseURL`. */
export interface OpenAIUpstream extends UpstreamEmulator {
  /** Queues responses; throws at once if a fixture has no recorded form the endpoint can use. */
  queue(...responses: QueuedResponse[]): void;
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
  send(res, status, "application/json", headers, body);
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
  const defaultFixture = options.defaultFixture ?? "vercel-ai/openai/openai-text";
  const basePacing: StreamPacing = { ...DEFAULT_PACING, ...options.pacing };
  const queues: Record<QueueEndpoint, QueuedResponse[]> = { chat: [], embeddings: [] };

  async function replayChat(res: ServerResponse, record: RecordedRequest, base: Record<string, string>, aborts: AbortCounter): Promise<void> {
    const entry = queues.chat.shift() ?? { fixture: defaultFixture };
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
    const head = { status, headers: { "content-type": "text/event-stream", "cache-control": "no-cache", ...headers } };
    await replayPaced(res, record, aborts, head, planSseWrites(events, pacing), pacing.delayMs);
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

  const running = await startEmulator<RecordedRequest>({
    async handle(record, res, { served, aborts }) {
      const base = { "x-request-id": `req_emulator_${served}` };
      const authError = checkAuth(options.apiKey, record.headers.authorization);
      if (authError !== undefined) return sendError(res, authError, base);
      const route = routeOf(record.method, record.path);
      if (route === undefined) return sendError(res, invalidUrl(record.method, record.path), base);
      if (route !== "models" && record.json === undefined) return sendError(res, invalidJson(), base);
      switch (route) {
        case "chat":
          return replayChat(res, record, base, aborts);
        case "embeddings":
          return answerEmbeddings(res, record, base);
        case "models":
          return listModels(res, base);
        default: {
          const never: never = route;
          throw new Error(`Unhandled route ${String(never)}`);
        }
      }
    },
    misuse(res, message) {
      sendError(res, emulatorMisuse(message), {});
    },
  });

  const own: Pick<OpenAIUpstream, "queue"> = {
    queue(...responses) {
      for (const response of responses) {
        const endpoint = response.endpoint ?? "chat";
        const usable = hasFixture(response.fixture, "json") || (endpoint === "chat" && streamEvents(response.fixture) !== undefined);
        if (!usable) throw new Error(`Fixture ${response.fixture} has no recorded form usable by the ${endpoint} endpoint`);
        queues[endpoint].push(response);
      }
    },
  };
  return emulatorApi(running, { baseURL: `${running.url}/v1`, pending: () => queues.chat.length + queues.embeddings.length }, own);
}
