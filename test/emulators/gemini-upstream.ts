/**
 * A Gemini API upstream for tests: a real HTTP server on 127.0.0.1 that speaks
 * `generativelanguage.googleapis.com/v1beta` and replays recorded traffic from `test/fixtures/`.
 * `@google/genai` takes its `url` as `httpOptions.baseUrl`; Gearbox takes `baseURL` (`/v1beta`).
 *
 * - `POST /v1beta/models/{model}:generateContent` replays the next queued fixture's `.json`.
 * - `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` replays its stream as
 *   `text/event-stream`: a `.chunks.txt` (vercel-ai: one JSON per line, each sent as
 *   `data: <json>\r\n\r\n`, as Gemini frames events; no `[DONE]`, Gemini sends none) or a
 *   raw `.txt` (firebase-gemini: SSE text, replayed byte for byte, odd endings included). At a
 *   queued status >= 400 the `.json` (else the raw `.txt`) is sent as the error body.
 * - `:embedContent` / `:batchEmbedContents` answer with synthesized vectors (nothing was
 *   recorded): `embeddingVector` of `embeddings.ts`, the SHA-256 stream of model and text scaled
 *   to unit length, at `outputDimensionality` or the model's native size (3072 for
 *   `gemini-embedding-*`, else 768). Deterministic; no semantics.
 *
 * With `{ apiKey }` every request must carry it (`x-goog-api-key`, or `?key=`): a missing key
 * gets Google's 403 PERMISSION_DENIED, a wrong one the 400 API_KEY_INVALID body of the recorded
 * `unary-failure-api-key.json` (without its DebugInfo, which echoes the key). Requests are
 * recorded, rejected ones too, and streams the client left are counted in `aborted`.
 */
import { existsSync, readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { emulatorApi, replayPaced, sendBytes, startEmulator, type RecordedRequest, type UpstreamEmulator } from "./emulator-base.ts";
import { embeddingVector } from "./embeddings.ts";
import { fixturePath, hasFixture, loadChunkLines, readFixtureBytes } from "./fixtures.ts";
import type { AbortCounter } from "./http-helpers.ts";
import { DEFAULT_PACING, planSseWrites, type StreamPacing } from "./sse.ts";

/** The model methods the emulator serves. */
export type GeminiAction = "generateContent" | "streamGenerateContent" | "embedContent" | "batchEmbedContents";

/** One response to replay, consumed by the next `generateContent` or `streamGenerateContent` request. */
export interface GeminiQueuedResponse {
  /** Fixture name under `test/fixtures/`, without extension: `"firebase-gemini/googleai/unary-success-basic-reply-short"`. */
  fixture: string;
  /** HTTP status. Default 200. */
  status?: number;
  /** Extra response headers, e.g. `{ "retry-after": "7" }`. */
  headers?: Record<string, string>;
  /** Pacing for this stream, over the emulator's. */
  pacing?: Partial<StreamPacing>;
}

/** A request as it reached the upstream, with the model and method its path named. */
export interface GeminiRecordedRequest extends RecordedRequest {
  model?: string;
  action?: GeminiAction;
}

/** Construction options; all optional. */
export interface GeminiUpstreamOptions {
  /** When set, requests must present this key. */
  apiKey?: string;
  /** Fixture replayed when nothing is queued (it has both forms). Default `"vercel-ai/google/google-text"`. */
  defaultFixture?: string;
  pacing?: Partial<StreamPacing>;
}

/** A running emulator: `url` is `@google/genai`'s `httpOptions.baseUrl`; `baseURL` (`url` + `/v1beta`) a Gearbox provider's `base_url`. */
export interface GeminiUpstream extends UpstreamEmulator<GeminiRecordedRequest> {
  /** Queues responses; throws at once for a fixture with no `.json`, `.chunks.txt` or `.txt`. */
  queue(...responses: GeminiQueuedResponse[]): void;
}

/** Google's error body (google.rpc.Status). */
interface GoogleError {
  status: number;
  body: { error: { code: number; message: string; status: string; details?: unknown[] } };
}

const ROUTE = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|embedContent|batchEmbedContents)$/;

function googleError(code: number, status: string, message: string, details?: unknown[]): GoogleError {
  return { status: code, body: { error: { code, message, status, ...(details && { details }) } } };
}

const missingKey = (): GoogleError =>
  googleError(
    403,
    "PERMISSION_DENIED",
    "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
  );
const invalidKey = (): GoogleError =>
  googleError(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", [
    {
      "@type": "type.googleapis.com/google.rpc.ErrorInfo",
      reason: "API_KEY_INVALID",
      domain: "googleapis.com",
      metadata: { service: "generativelanguage.googleapis.com" },
    },
    { "@type": "type.googleapis.com/google.rpc.LocalizedMessage", locale: "en-US", message: "API key not valid. Please pass a valid API key." },
  ]);
const invalidArgument = (message: string): GoogleError => googleError(400, "INVALID_ARGUMENT", message);

/** Path of a firebase-gemini raw stream (`<name>.txt`); the name is validated as any fixture name. */
function rawStreamPath(name: string): string {
  return fixturePath(name, "json").replace(/\.json$/, ".txt");
}

function hasRawStream(name: string): boolean {
  return existsSync(rawStreamPath(name));
}

/**
 * The SSE events of a fixture's recorded stream as the emulator writes them: `.chunks.txt`
 * lines framed `data: <json>\r\n\r\n`, or a raw `.txt` cut after each blank line (bytes kept).
 */
export function geminiStreamEvents(name: string): string[] | undefined {
  if (hasFixture(name, "chunks")) return loadChunkLines(name).map((line) => `data: ${line}\r\n\r\n`);
  if (!hasRawStream(name)) return undefined;
  return readFileSync(rawStreamPath(name), "utf8")
    .split(/(?<=\n\r?\n)/)
    .filter((event) => event.length > 0);
}

/** The bytes of a fixture's recorded stream, as the emulator sends them. */
export function geminiStreamBytes(name: string): Buffer {
  const events = geminiStreamEvents(name);
  if (events === undefined) throw new Error(`Fixture ${name} has no .chunks.txt or .txt stream`);
  return Buffer.from(events.join(""), "utf8");
}

function errorBodyOf(name: string): Buffer | undefined {
  if (hasFixture(name, "json")) return readFixtureBytes(name, "json");
  return hasRawStream(name) ? readFileSync(rawStreamPath(name)) : undefined;
}

function send(res: ServerResponse, status: number, headers: Record<string, string>, body: Buffer): void {
  sendBytes(res, status, "application/json; charset=UTF-8", headers, body);
}

function sendError(res: ServerResponse, error: GoogleError): void {
  send(res, error.status, {}, Buffer.from(JSON.stringify(error.body)));
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The text of an embed request's `content`, or the 400 Google answers. */
function contentText(content: unknown): string | GoogleError {
  const parts = isRecord(content) && Array.isArray(content.parts) ? content.parts : undefined;
  const texts = parts?.map((p) => (isRecord(p) && typeof p.text === "string" ? p.text : undefined));
  if (texts === undefined || texts.length === 0 || texts.some((t) => t === undefined)) {
    return invalidArgument("* EmbedContentRequest.content: contents.parts must not be empty and must hold text.");
  }
  return texts.join("");
}

/** `{values}` for one embed request, or its 400. */
function embed(model: string, request: unknown): { values: number[] } | GoogleError {
  if (!isRecord(request)) return invalidArgument("Invalid JSON payload received.");
  const text = contentText(request.content);
  if (typeof text !== "string") return text;
  const native = model.startsWith("gemini-embedding") ? 3072 : 768;
  const dims = request.outputDimensionality ?? native;
  if (typeof dims !== "number" || !Number.isInteger(dims) || dims < 1 || dims > native) {
    return invalidArgument(`* EmbedContentRequest.output_dimensionality: must be between 1 and ${native} for models/${model}.`);
  }
  return { values: Array.from(embeddingVector(model, text, dims)) };
}

/** Starts an emulator on 127.0.0.1 and a free port. */
export async function startGeminiUpstream(options: GeminiUpstreamOptions = {}): Promise<GeminiUpstream> {
  const defaultFixture = options.defaultFixture ?? "vercel-ai/google/google-text";
  const basePacing: StreamPacing = { ...DEFAULT_PACING, ...options.pacing };
  const queue: GeminiQueuedResponse[] = [];

  async function generate(res: ServerResponse, record: GeminiRecordedRequest, streaming: boolean, aborts: AbortCounter): Promise<void> {
    const entry = queue.shift() ?? { fixture: defaultFixture };
    record.fixture = entry.fixture;
    const status = entry.status ?? 200;
    const headers = entry.headers ?? {};
    if (!streaming || status >= 400) {
      const body = status >= 400 ? errorBodyOf(entry.fixture) : hasFixture(entry.fixture, "json") ? readFixtureBytes(entry.fixture, "json") : undefined;
      if (body === undefined) return sendError(res, googleError(500, "INTERNAL", `emulator: fixture ${entry.fixture} has no .json`));
      return send(res, status, headers, body);
    }
    const events = geminiStreamEvents(entry.fixture);
    if (events === undefined) return sendError(res, googleError(500, "INTERNAL", `emulator: fixture ${entry.fixture} has no stream`));
    const pacing: StreamPacing = { ...basePacing, ...entry.pacing };
    const head = { status, headers: { "content-type": "text/event-stream", "cache-control": "no-cache", ...headers } };
    await replayPaced(res, record, aborts, head, planSseWrites(events, pacing), pacing.delayMs);
  }

  function embedding(res: ServerResponse, record: GeminiRecordedRequest, model: string, batch: boolean): void {
    const json = record.json;
    if (!batch) {
      const out = embed(model, json);
      return "values" in out ? send(res, 200, {}, Buffer.from(JSON.stringify({ embedding: out }))) : sendError(res, out);
    }
    const list = isRecord(json) && Array.isArray(json.requests) ? json.requests : undefined;
    if (list === undefined || list.length === 0) return sendError(res, invalidArgument("* BatchEmbedContentsRequest.requests: must not be empty."));
    const embeddings: { values: number[] }[] = [];
    for (const [i, request] of list.entries()) {
      if (isRecord(request) && request.model !== `models/${model}`) {
        return sendError(
          res,
          invalidArgument(`* BatchEmbedContentsRequest.requests[${i}].model: the model in the request (models/${model}) and the batch item must match.`),
        );
      }
      const out = embed(model, request);
      if (!("values" in out)) return sendError(res, out);
      embeddings.push(out);
    }
    send(res, 200, {}, Buffer.from(JSON.stringify({ embeddings })));
  }

  const running = await startEmulator<GeminiRecordedRequest>({
    extend(plain) {
      const route = ROUTE.exec(new URL(plain.url, "http://emulator").pathname);
      return route ? { ...plain, model: decodeURIComponent(route[1] ?? ""), action: route[2] as GeminiAction } : plain;
    },
    handle(record, res, { aborts }) {
      const url = new URL(record.url, "http://emulator");
      const header = record.headers["x-goog-api-key"];
      const key = (Array.isArray(header) ? header[0] : header) ?? url.searchParams.get("key") ?? undefined;
      if (options.apiKey !== undefined && key === undefined) return sendError(res, missingKey());
      if (options.apiKey !== undefined && key !== options.apiKey) return sendError(res, invalidKey());
      if (record.method !== "POST" || record.action === undefined || record.model === undefined) {
        return sendError(res, googleError(404, "NOT_FOUND", `emulator: no such method: ${record.method} ${url.pathname}`));
      }
      if (record.json === undefined) return sendError(res, invalidArgument("Invalid JSON payload received. Unexpected token."));
      switch (record.action) {
        case "generateContent":
          return generate(res, record, false, aborts);
        case "streamGenerateContent":
          if (url.searchParams.get("alt") !== "sse") return sendError(res, invalidArgument("emulator: streamGenerateContent is served with alt=sse only."));
          return generate(res, record, true, aborts);
        case "embedContent":
          return embedding(res, record, record.model, false);
        case "batchEmbedContents":
          return embedding(res, record, record.model, true);
        default: {
          const never: never = record.action;
          throw new Error(`Unhandled action ${String(never)}`);
        }
      }
    },
    misuse(res, message) {
      sendError(res, googleError(500, "INTERNAL", `emulator: ${message}`));
    },
  });

  const own: Pick<GeminiUpstream, "queue"> = {
    queue(...responses) {
      for (const response of responses) {
        const usable = hasFixture(response.fixture, "json") || geminiStreamEvents(response.fixture) !== undefined;
        if (!usable) throw new Error(`Fixture ${response.fixture} has no .json, .chunks.txt or .txt`);
        queue.push(response);
      }
    },
  };
  return emulatorApi(running, { baseURL: `${running.url}/v1beta`, pending: () => queue.length }, own);
}
