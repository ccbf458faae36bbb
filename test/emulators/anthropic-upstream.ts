/**
 * An Anthropic Messages API upstream for tests: a real HTTP server on 127.0.0.1 that replays
 * recorded Anthropic traffic from `test/fixtures/`, so no test calls Anthropic.
 *
 * - `POST /v1/messages` replays the next queued response (else the default fixture): with
 *   `"stream": true` the fixture's `.chunks.txt` as a paced SSE stream, each line framed as
 *   Anthropic frames it (`event: <payload.type>\ndata: <line>\n\n`), otherwise its `.json` body.
 *   A queued `status` >= 400 sends the `.json` (or a synthesized `error`) as the error body.
 * - Like Anthropic, it answers 400 to a request without a known `anthropic-version`, whose body
 *   lacks `model`, `max_tokens` or `messages`, or that sends `temperature`/`top_p`/`top_k` with
 *   version `2026-10-21` (which removed them); and, when built with `{ apiKey }`, 401 to a
 *   request whose key (`x-api-key`, else `Authorization: Bearer`, which SDK 1.x sends) differs.
 *   All in Anthropic's error shape (`{"type":"error","error":{"type","message"}}`), with a
 *   `request-id` header. The error wording is Anthropic's where known, else the emulator's.
 *
 * Every request is recorded (rejected ones too), and streams the client left are counted.
 */
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import { emulatorApi, replayPaced, sendBytes as send, startEmulator, type RecordedRequest, type UpstreamEmulator } from "./emulator-base.ts";
import { hasFixture, loadChunkLines, readFixtureBytes } from "./fixtures.ts";
import type { AbortCounter } from "./http-helpers.ts";
import { DEFAULT_PACING, planSseWrites, type StreamPacing } from "./sse.ts";

/** An Anthropic error the emulator writes itself (nothing was recorded): type and message. */
export interface AnthropicErrorSpec {
  /** Anthropic's error type, e.g. `overloaded_error`, `rate_limit_error`. */
  type: string;
  message: string;
}

/** One response to replay, consumed by the next `POST /v1/messages`. */
export interface AnthropicQueuedResponse {
  /** Fixture name under `test/fixtures/` without extension, e.g. `"vercel-ai/anthropic/anthropic-text"`. Not needed with `error`. */
  fixture?: string;
  /** HTTP status. Default 200, or the usual status of `error.type` (529 for `overloaded_error`). */
  status?: number;
  /** Extra response headers, e.g. `{ "retry-after": "7" }`. */
  headers?: Record<string, string>;
  /** Answer with this Anthropic error body instead of a fixture. */
  error?: AnthropicErrorSpec;
  /** For a stream: after this many events, send an in-band `error` event and end the stream. */
  streamError?: AnthropicErrorSpec & { afterEvents: number };
  /** Pacing for this response's stream, over the emulator's. */
  pacing?: Partial<StreamPacing>;
}

/** Construction options; all optional. */
export interface AnthropicUpstreamOptions {
  /** When set, requests must present this key (`x-api-key` or `Authorization: Bearer`), or get Anthropic's 401. */
  apiKey?: string;
  /** Fixture replayed when nothing is queued. Default `"vercel-ai/anthropic/anthropic-text"`. */
  defaultFixture?: string;
  /** Default pacing of streams. */
  pacing?: Partial<StreamPacing>;
}

/**
 * A running emulator. `url` is what the Anthropic SDK takes as `baseURL` (it adds `/v1/messages`);
 * `baseURL` (`url` + `/v1`) is what a Gearbox provider takes as `base_url` (Gearbox adds `/messages`).
 */
export interface AnthropicUpstream extends UpstreamEmulator {
  /** Queues responses; throws at once for a fixture with no recorded form, or an entry with neither fixture nor error. */
  queue(...responses: AnthropicQueuedResponse[]): void;
}

/** Anthropic's status for each error type it documents. */
export const ANTHROPIC_ERROR_STATUS: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** Anthropic's error body. */
export function anthropicErrorBody(error: AnthropicErrorSpec): { type: "error"; error: AnthropicErrorSpec } {
  return { type: "error", error: { type: error.type, message: error.message } };
}

/** Frames `.chunks.txt` lines as Anthropic SSE events: `event: <type>\ndata: <line>\n\n`, lines unchanged. */
export function anthropicSseEvents(lines: readonly string[]): string[] {
  return lines.map((line) => {
    const payload: unknown = JSON.parse(line);
    const type = typeof payload === "object" && payload !== null && "type" in payload && typeof payload.type === "string" ? payload.type : undefined;
    if (type === undefined) throw new Error(`Anthropic chunk without a 'type': ${line.slice(0, 80)}`);
    return `event: ${type}\ndata: ${line}\n\n`;
  });
}

interface Rejection {
  status: number;
  error: AnthropicErrorSpec;
}

function reject(status: number, type: string, message: string): Rejection {
  return { status, error: { type, message } };
}

function sendBytes(res: ServerResponse, status: number, headers: Record<string, string>, body: Buffer): void {
  send(res, status, "application/json", headers, body);
}

function sendError(res: ServerResponse, rejection: Rejection, headers: Record<string, string>): void {
  sendBytes(res, rejection.status, headers, Buffer.from(JSON.stringify(anthropicErrorBody(rejection.error))));
}

/** The API versions Anthropic knows; `2026-10-21` removed the sampling parameters. */
const API_VERSIONS: ReadonlySet<string> = new Set(["2023-01-01", "2023-06-01", "2026-10-21"]);
const REMOVED_IN_2026_10_21 = ["temperature", "top_p", "top_k"] as const;

/** The key presented: `x-api-key` wins over `Authorization: Bearer` (SDK 1.x sends the latter), as at Anthropic. */
function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  const key = headers["x-api-key"];
  if (typeof key === "string") return key;
  return headers.authorization?.match(/^Bearer\s+(.+)$/i)?.[1];
}

/** Auth, route, version header and the body fields Anthropic requires, in the order Anthropic checks them. */
function validate(record: RecordedRequest, apiKey: string | undefined): Rejection | undefined {
  const key = presentedKey(record.headers);
  if (apiKey !== undefined && key === undefined) return reject(401, "authentication_error", "x-api-key header is required");
  if (apiKey !== undefined && key !== apiKey) return reject(401, "authentication_error", "invalid x-api-key");
  if (record.method !== "POST" || record.path !== "/v1/messages") return reject(404, "not_found_error", "Not Found");
  const version = record.headers["anthropic-version"];
  if (typeof version !== "string") return reject(400, "invalid_request_error", "anthropic-version: header is required");
  if (!API_VERSIONS.has(version)) return reject(400, "invalid_request_error", `anthropic-version: unknown version '${version}'`);
  const json = record.json;
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return reject(400, "invalid_request_error", "There was an issue with your request body: it is not a JSON object");
  }
  const body = json as Record<string, unknown>;
  if (typeof body.model !== "string") return reject(400, "invalid_request_error", "model: Field required");
  if (!Number.isInteger(body.max_tokens) || (body.max_tokens as number) < 1) return reject(400, "invalid_request_error", "max_tokens: Field required");
  if (!Array.isArray(body.messages)) return reject(400, "invalid_request_error", "messages: Field required");
  const removed = version === "2026-10-21" ? REMOVED_IN_2026_10_21.find((field) => field in body) : undefined;
  if (removed !== undefined) return reject(400, "invalid_request_error", `${removed}: Extra inputs are not permitted`);
  return undefined;
}

function misuse(message: string): Rejection {
  return reject(500, "api_error", `Anthropic emulator: ${message}`);
}

/** Starts an emulator on 127.0.0.1 and a free port. */
export async function startAnthropicUpstream(options: AnthropicUpstreamOptions = {}): Promise<AnthropicUpstream> {
  const defaultFixture = options.defaultFixture ?? "vercel-ai/anthropic/anthropic-text";
  const basePacing: StreamPacing = { ...DEFAULT_PACING, ...options.pacing };
  const queue: AnthropicQueuedResponse[] = [];

  async function replay(res: ServerResponse, record: RecordedRequest, base: Record<string, string>, aborts: AbortCounter): Promise<void> {
    const entry = queue.shift() ?? { fixture: defaultFixture };
    const headers = { ...base, ...entry.headers };
    if (entry.error !== undefined) {
      const status = entry.status ?? ANTHROPIC_ERROR_STATUS[entry.error.type] ?? 500;
      return sendError(res, { status, error: entry.error }, headers);
    }
    const fixture = entry.fixture ?? defaultFixture;
    record.fixture = fixture;
    const status = entry.status ?? 200;
    const wantsStream = (record.json as { stream?: unknown }).stream === true;
    if (!wantsStream || status >= 400) {
      if (!hasFixture(fixture, "json")) return sendError(res, misuse(`fixture ${fixture} has no .json`), base);
      return sendBytes(res, status, headers, readFixtureBytes(fixture, "json"));
    }
    if (!hasFixture(fixture, "chunks")) return sendError(res, misuse(`fixture ${fixture} has no .chunks.txt`), base);
    let events = anthropicSseEvents(loadChunkLines(fixture));
    if (entry.streamError !== undefined) {
      const error = JSON.stringify(anthropicErrorBody(entry.streamError));
      events = [...events.slice(0, entry.streamError.afterEvents), `event: error\ndata: ${error}\n\n`];
    }
    const pacing: StreamPacing = { ...basePacing, ...entry.pacing };
    const head = { status, headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", ...headers } };
    await replayPaced(res, record, aborts, head, planSseWrites(events, pacing), pacing.delayMs);
  }

  const running = await startEmulator<RecordedRequest>({
    handle(record, res, { served, aborts }) {
      const base = { "request-id": `req_emulator_${served}` };
      const rejection = validate(record, options.apiKey);
      if (rejection !== undefined) return sendError(res, rejection, base);
      return replay(res, record, base, aborts);
    },
    misuse(res, message) {
      sendError(res, misuse(message), {});
    },
  });

  const own: Pick<AnthropicUpstream, "queue"> = {
    queue(...responses) {
      for (const response of responses) {
        if (response.error === undefined) {
          if (response.fixture === undefined) throw new Error("A queued response needs a fixture or an error");
          if (!hasFixture(response.fixture, "json") && !hasFixture(response.fixture, "chunks")) {
            throw new Error(`Fixture ${response.fixture} has no recorded form (.json or .chunks.txt)`);
          }
        }
        queue.push(response);
      }
    },
  };
  return emulatorApi(running, { baseURL: `${running.url}/v1`, pending: () => queue.length }, own);
}
