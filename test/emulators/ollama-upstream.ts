/**
 * An Ollama upstream for tests: a real HTTP server on 127.0.0.1 that speaks Ollama's native API
 * and replays `test/fixtures/ollama/` (transcribed from Ollama's API docs, not recorded: see that
 * folder's README), so no test needs a running Ollama.
 *
 * - `POST /api/chat` replays the next queued fixture (else the default one). Ollama streams
 *   unless the body says `"stream": false`: streamed, the fixture's `.ndjson` goes out as
 *   `application/x-ndjson` in several paced writes, optionally cut inside lines; otherwise its
 *   `.json`. A queued status >= 400 sends the `.json` body with that status, even to a stream
 *   request (Ollama reports errors before a stream starts as plain JSON).
 * - `POST /api/embed` replays a fixture queued for `endpoint: "embed"`, else synthesizes a
 *   deterministic answer: each vector is `embeddingVector(model, input, n)` from `embeddings.ts`
 *   (SHA-256 of model and input, unit length, as Ollama normalizes too), `n` from a small table
 *   of native sizes, or `dimensions` when smaller (Ollama truncates and renormalizes);
 *   `prompt_eval_count` is one token per 4 UTF-8 bytes of each input, at least 1.
 * - `GET /api/tags` replays `ollama/tags.json`, or lists `options.models` in the same shape.
 *
 * With `options.models`, chat and embed requests for other models get Ollama's 404
 * `model '<name>' not found`. Bad bodies get Ollama's 400 `{"error": …}` (texts approximate Go's).
 * Unknown routes get gin's `404 page not found`. Every request is recorded, and streams the
 * client left early are counted.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { emulatorApi, replayPaced, sendBytes, startEmulator, type RecordedRequest, type UpstreamEmulator } from "./emulator-base.ts";
import { embeddingVector } from "./embeddings.ts";
import { fixturePath, hasFixture, readFixtureBytes } from "./fixtures.ts";
import type { AbortCounter } from "./http-helpers.ts";
import { DEFAULT_PACING, planSseWrites, type StreamPacing } from "./sse.ts";

/** Endpoints that consume queued fixtures. */
export type OllamaQueueEndpoint = "chat" | "embed";

/** One response to replay, consumed by the next request to its endpoint. */
export interface OllamaQueuedResponse {
  /** Fixture name under `test/fixtures/`, without extension: `"ollama/chat-stream"`. */
  fixture: string;
  /** Which endpoint's next request gets it. Default `"chat"`. */
  endpoint?: OllamaQueueEndpoint;
  /** HTTP status. Default 200. At 400 and above the `.json` body is sent, even to a stream request. */
  status?: number;
  /** Extra response headers; they override the defaults. */
  headers?: Record<string, string>;
  /**
   * Pacing of this stream, over the emulator's. In NDJSON terms: `eventsPerWrite` is lines per
   * write, and `splitEvents` cuts every line in two (inside a multi-byte character when it has one).
   */
  pacing?: Partial<StreamPacing>;
  /** Send only the first this-many bytes of the stream, then end the response normally (a cut-off upstream). */
  endAfterBytes?: number;
}

/** Construction options; all optional. */
export interface OllamaUpstreamOptions {
  /**
   * Chat fixture replayed when nothing is queued (it needs the form the request asks for).
   * Default: `"ollama/chat"` (`.json`) for `"stream": false`, `"ollama/chat-stream"` (`.ndjson`) otherwise.
   */
  defaultFixture?: string;
  /** Default pacing of streams. */
  pacing?: Partial<StreamPacing>;
  /** The models the server "has": listed by `/api/tags`; other names get a 404. */
  models?: string[];
}

/** A running emulator; `baseURL` is `url`, the provider's base URL (Ollama's paths start at `/api`). */
export interface OllamaUpstream extends UpstreamEmulator {
  /** Queues responses; throws at once if a fixture has no form the endpoint can use. */
  queue(...responses: OllamaQueuedResponse[]): void;
}

/** Absolute path of a fixture's `.ndjson` stream (names checked as `fixtures.ts` checks them). */
export function ndjsonFixturePath(name: string): string {
  return fixturePath(name, "json").replace(/\.json$/, ".ndjson");
}

/** Whether the fixture has an `.ndjson` stream. */
export function hasNdjsonFixture(name: string): boolean {
  return existsSync(ndjsonFixturePath(name));
}

/** The `.ndjson` stream's bytes, unchanged. */
export function readNdjsonFixture(name: string): Buffer {
  return readFileSync(ndjsonFixturePath(name));
}

/** The stream's lines, each with its `\n` (what goes on the wire, line by line). */
export function ndjsonFixtureLines(name: string): string[] {
  return readNdjsonFixture(name)
    .toString("utf8")
    .split(/(?<=\n)/)
    .filter((line) => line.trim() !== "");
}

const NATIVE_DIMENSIONS: Readonly<Record<string, number>> = { "all-minilm": 384, "nomic-embed-text": 768, "mxbai-embed-large": 1024 };
const DEFAULT_DIMENSIONS = 768;
const JSON_TYPE = "application/json; charset=utf-8";

type Route = "chat" | "embed" | "tags";

function routeOf(method: string, path: string): Route | undefined {
  if (method === "POST" && path === "/api/chat") return "chat";
  if (method === "POST" && path === "/api/embed") return "embed";
  if (method === "GET" && path === "/api/tags") return "tags";
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function send(res: ServerResponse, status: number, headers: Record<string, string>, body: Buffer, type = JSON_TYPE): void {
  sendBytes(res, status, type, headers, body);
}

function sendError(res: ServerResponse, status: number, message: string): void {
  send(res, status, {}, Buffer.from(JSON.stringify({ error: message })));
}

/** Inputs of an `/api/embed` body, or the message Ollama's handler answers. */
function embedInputs(input: unknown): string[] | string {
  if (typeof input === "string") return input === "" ? [] : [input];
  if (input === undefined || input === null) return [];
  if (Array.isArray(input) && input.every((item): item is string => typeof item === "string")) return input;
  return "invalid input type";
}

function synthesizeEmbed(model: string, inputs: string[], dimensions: unknown): Record<string, unknown> {
  const native = NATIVE_DIMENSIONS[model.replace(/:latest$/, "")] ?? DEFAULT_DIMENSIONS;
  const size = typeof dimensions === "number" && Number.isInteger(dimensions) && dimensions > 0 && dimensions < native ? dimensions : native;
  const embeddings = inputs.map((input) => Array.from(embeddingVector(model, input, size)));
  const tokens = inputs.reduce((sum, input) => sum + Math.max(1, Math.ceil(Buffer.byteLength(input, "utf8") / 4)), 0);
  return { model, embeddings, ...(tokens > 0 && { prompt_eval_count: tokens }) };
}

function tagsBody(models: readonly string[]): Record<string, unknown> {
  return {
    models: models.map((name) => ({
      name,
      model: name,
      modified_at: "2025-05-04T17:37:44.706015396-07:00",
      size: 0,
      digest: createHash("sha256").update(name).digest("hex"),
      details: { parent_model: "", format: "gguf", family: "", families: [], parameter_size: "", quantization_level: "" },
    })),
  };
}

/** Starts an emulator on 127.0.0.1 and a free port. */
export async function startOllamaUpstream(options: OllamaUpstreamOptions = {}): Promise<OllamaUpstream> {
  const basePacing: StreamPacing = { ...DEFAULT_PACING, ...options.pacing };
  const known = options.models ? new Set(options.models) : undefined;
  const queues: Record<OllamaQueueEndpoint, OllamaQueuedResponse[]> = { chat: [], embed: [] };

  const unknownModel = (model: string): boolean => known !== undefined && !known.has(model) && !known.has(`${model}:latest`);

  async function replayChat(res: ServerResponse, record: RecordedRequest, body: Record<string, unknown>, aborts: AbortCounter): Promise<void> {
    const wantsStream = body.stream !== false;
    const fallback = options.defaultFixture ?? (wantsStream ? "ollama/chat-stream" : "ollama/chat");
    const entry = queues.chat.shift() ?? { fixture: fallback };
    record.fixture = entry.fixture;
    const status = entry.status ?? 200;
    if (!wantsStream || status >= 400) {
      if (!hasFixture(entry.fixture, "json")) return sendError(res, 500, `emulator misuse: fixture ${entry.fixture} has no .json`);
      return send(res, status, entry.headers ?? {}, readFixtureBytes(entry.fixture, "json"));
    }
    if (!hasNdjsonFixture(entry.fixture)) return sendError(res, 500, `emulator misuse: fixture ${entry.fixture} has no .ndjson`);
    const pacing: StreamPacing = { ...basePacing, ...entry.pacing };
    let writes = planSseWrites(ndjsonFixtureLines(entry.fixture), pacing);
    if (entry.endAfterBytes !== undefined) writes = cutWrites(writes, entry.endAfterBytes);
    await replayPaced(res, record, aborts, { status, headers: { "content-type": "application/x-ndjson", ...entry.headers } }, writes, pacing.delayMs);
  }

  function answerEmbed(res: ServerResponse, record: RecordedRequest, body: Record<string, unknown>, model: string): void {
    const entry = queues.embed.shift();
    if (entry !== undefined) {
      record.fixture = entry.fixture;
      return send(res, entry.status ?? 200, entry.headers ?? {}, readFixtureBytes(entry.fixture, "json"));
    }
    const inputs = embedInputs(body.input);
    if (typeof inputs === "string") return sendError(res, 400, inputs);
    send(res, 200, {}, Buffer.from(JSON.stringify(synthesizeEmbed(model, inputs, body.dimensions))));
  }

  const running = await startEmulator<RecordedRequest>({
    handle(record, res, { aborts }) {
      const route = routeOf(record.method, record.path);
      if (route === undefined) return send(res, 404, {}, Buffer.from("404 page not found"), "text/plain");
      if (route === "tags") {
        const tags = options.models ? Buffer.from(JSON.stringify(tagsBody(options.models))) : readFixtureBytes("ollama/tags", "json");
        return send(res, 200, {}, tags);
      }
      if (record.body.length === 0) return sendError(res, 400, "missing request body");
      const json = record.json;
      if (!isRecord(json)) return sendError(res, 400, "invalid JSON request body");
      const model = typeof json.model === "string" ? json.model : "";
      if (model === "") return route === "chat" ? sendError(res, 400, "model is required") : sendError(res, 404, "model '' not found");
      if (unknownModel(model)) return sendError(res, 404, `model '${model}' not found`);
      switch (route) {
        case "chat":
          return replayChat(res, record, json, aborts);
        case "embed":
          return answerEmbed(res, record, json, model);
        default: {
          const never: never = route;
          throw new Error(`Unhandled route ${String(never)}`);
        }
      }
    },
    misuse(res, message) {
      sendError(res, 500, `emulator misuse: ${message}`);
    },
  });

  const own: Pick<OllamaUpstream, "queue"> = {
    queue(...responses) {
      for (const response of responses) {
        const endpoint = response.endpoint ?? "chat";
        const usable = hasFixture(response.fixture, "json") || (endpoint === "chat" && hasNdjsonFixture(response.fixture));
        if (!usable) throw new Error(`Fixture ${response.fixture} has no form usable by the ${endpoint} endpoint`);
        queues[endpoint].push(response);
      }
    },
  };
  return emulatorApi(running, { baseURL: running.url, pending: () => queues.chat.length + queues.embed.length }, own);
}

/** The planned writes, keeping only the first `limit` bytes. */
function cutWrites(writes: readonly Buffer[], limit: number): Buffer[] {
  const out: Buffer[] = [];
  let left = limit;
  for (const write of writes) {
    if (left <= 0) break;
    out.push(write.subarray(0, left));
    left -= write.length;
  }
  return out;
}
