/**
 * The OpenAI-compatible HTTP front door (devices and non-mesh callers). It runs the same
 * `RequestProcessor` as the ext_proc server and plays Envoy's part itself: it reads the body,
 * applies the mutations, calls the chosen provider over pooled keep-alive connections, and streams the answer back, cancelling the
 * upstream call when the client goes away.
 */
import http from "node:http";
import { listenHttp, type Listening } from "./listen.ts";
import type { ProcessorDeps } from "../processor/processor.ts";
import { RequestProcessor } from "../processor/processor.ts";
import { canonicalIp } from "../client-ip.ts";
import { conversationApi, CONVERSATIONS_PATH } from "./conversation-api.ts";
import { endpointFor, allEndpoints, errorBodyFor } from "../endpoints/registry.ts";
import { asGatewayError, GatewayError, toErrorResponse, type ErrorResponse } from "../../common/errors.ts";
import type { Headers, Outcome } from "../processor/outcome.ts";
import { CallAbort, type Abortable } from "../../common/net/call-abort.ts";
import { applyHeaderMutation, forwardable, plainHeaders, toUpstream } from "./headers.ts";
import { destination, readAll, sendUpstream, type Destination } from "./upstream-client.ts";
import type { Provider } from "../providers/provider.ts";
import { withRetries } from "../resilience/retrying.ts";
import { timeoutsOf, upstreamTimeout } from "../resilience/timeouts.ts";
import { idleGuarded, readAllGuarded } from "../resilience/idle-guard.ts";
import { relayStream } from "./stream-relay.ts";
import { LOCAL_REPLY } from "../resilience/failure-cause.ts";
import { isPending } from "../../common/step.ts";

export type FrontDoor = Listening;

function send(res: http.ServerResponse, status: number, headers: Headers, body: Buffer): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, headers);
  res.end(body);
}

/** An error outside any endpoint (an unknown URL, the conversations API): OpenAI's schema. */
function sendError(res: http.ServerResponse, err: unknown): void {
  sendResponse(res, toErrorResponse(err));
}

function sendResponse(res: http.ServerResponse, { status, headers, body }: ErrorResponse): void {
  send(res, status, headers, body);
}

function sendJson(res: http.ServerResponse, status: number, value: unknown): void {
  const body = Buffer.from(JSON.stringify(value));
  send(res, status, { "content-type": "application/json", "content-length": String(body.length) }, body);
}

/** Reads the request body up to `limit` bytes; over it, rejects with 413 without reading on. */
function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners("data");
        req.pause();
        reject(new GatewayError(413, "invalid_request_error", `The request body exceeds the limit of ${limit} bytes.`, { code: "request_too_large" }));
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks, size)));
    req.on("error", reject);
  });
}

/** The device API (`extproc/devices/api.ts`), served under `/v1/device/` when given. */
export interface DeviceRoutes {
  handle(req: http.IncomingMessage, res: http.ServerResponse): void;
}

export class FrontDoorHandler {
  /** Calls proxied and not yet finished. */
  private inFlight = 0;

  constructor(
    private readonly deps: ProcessorDeps,
    private readonly devices?: DeviceRoutes,
  ) {}

  handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    try {
      this.route(req, res)?.catch((err: unknown) => this.failed(res, err));
    } catch (err) {
      this.failed(res, err);
    }
  }

  private failed(res: http.ServerResponse, err: unknown): void {
    this.deps.logger.error({ err }, "front door request failed");
    sendError(res, err);
  }

  /**
   * Answers a request: at once, or — a proxied call, the conversations API — with the promise of
   * its answer. Not an async function: a proxied call costs no async frame around its own.
   */
  private route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> | undefined {
    const path = req.url ?? "/";
    const query = path.indexOf("?");
    const bare = query < 0 ? path : path.slice(0, query);
    if (req.method === "GET" && (bare === "/healthz" || bare === "/readyz")) sendJson(res, 200, { status: "ok" });
    else if (req.method === "GET" && bare === "/v1/models") sendJson(res, 200, this.models());
    else if (req.method === "GET" && bare.startsWith("/v1/models/")) this.model(res, bare.slice("/v1/models/".length));
    else if (this.devices && bare.startsWith("/v1/device/")) this.devices.handle(req, res);
    else if (bare.startsWith(CONVERSATIONS_PATH)) return this.conversations(req, res, bare);
    else if (!endpointFor(path)) {
      const unknown = new GatewayError(404, "invalid_request_error", `Invalid URL (${req.method ?? "GET"} ${bare || "/"})`, { code: "unknown_url" });
      sendResponse(res, toErrorResponse(unknown, undefined, errorBodyFor(bare)));
    } else return this.proxy(req, res, path);
    return undefined;
  }

  private async conversations(req: http.IncomingMessage, res: http.ServerResponse, bare: string): Promise<void> {
    const answer = await conversationApi(req, bare, this.deps.conversations, this.deps.governance);
    if ("error" in answer) sendError(res, answer.error);
    else sendJson(res, answer.status, answer.body);
  }

  private async proxy(req: http.IncomingMessage, res: http.ServerResponse, path: string): Promise<void> {
    // The front door is the destination itself: nothing to let through untouched, so never shadowed.
    const processor = new RequestProcessor(this.deps, { transport: "front_door" });
    this.inFlight++;
    try {
      const headers = plainHeaders(req.headers);
      headers[":method"] = req.method ?? "GET";
      headers[":path"] = path;
      headers[":scheme"] = "http";
      headers[":authority"] = req.headers.host ?? "";
      const hasBody = req.headers["content-length"] !== undefined ? req.headers["content-length"] !== "0" : req.headers["transfer-encoding"] !== undefined;
      // No mTLS here, so no workload identity: only the peer's IP.
      const client = { address: canonicalIp(req.socket.remoteAddress) };
      if (this.respondIfRejected(res, processor.requestHeaders(headers, !hasBody, client), headers)) return;
      let body: Buffer;
      try {
        body = await readBody(req, this.deps.runtime.current().config.limits.max_request_bytes);
      } catch (err) {
        res.setHeader("connection", "close");
        // Over the limit: recorded as the 413 the client gets; a body cut off by the client: 499.
        if (err instanceof GatewayError) processor.fail(err);
        else processor.abort("request body not read");
        return sendResponse(res, processor.errorResponse(err));
      }
      // Awaited only when it is pending: the embedded defaults decide at once.
      const step = processor.requestBody(body);
      const decided = isPending(step) ? await step : step;
      if (this.respondIfRejected(res, decided, headers)) return;
      const mutation = decided.kind === "continue" ? decided.mutation : undefined;
      await this.callUpstream(req, res, processor, headers, mutation?.body ?? body, mutation?.edgeEndpoint);
    } catch (err) {
      // A fault answers 500 and is still recorded as one: no request vanishes.
      processor.fail(asGatewayError(err, processor.id));
      this.deps.logger.error({ err, request_id: processor.id }, "front door request failed");
      sendResponse(res, processor.errorResponse(err));
    } finally {
      this.inFlight--;
    }
  }

  /** Applies a phase outcome to the request headers; true when it answered the client. */
  private respondIfRejected(res: http.ServerResponse, outcome: Outcome, headers: Headers): boolean {
    if (outcome.kind === "respond") {
      send(res, outcome.response.status, outcome.response.headers, outcome.response.body);
      return true;
    }
    applyHeaderMutation(headers, outcome.mutation);
    return false;
  }

  private async callUpstream(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    processor: RequestProcessor,
    headers: Headers,
    body: Buffer,
    edgeEndpoint: string | undefined,
  ): Promise<void> {
    const target = this.upstreamTarget(headers, edgeEndpoint);
    const provider = target.provider;
    const to = destination(target.origin, headers[":path"] ?? "/");
    const abort = new CallAbort();
    const onClose = () => {
      if (res.writableFinished) return;
      abort.abort(new Error("client disconnected"));
      // Gearbox's own calls for this request (a fallback chain) stop too.
      processor.abort("client disconnected");
    };
    res.on("close", onClose);
    const timer = setTimeout(
      () =>
        abort.abort(
          new GatewayError(504, "timeout_error", `Upstream '${provider.name}' did not answer within ${provider.timeoutMs} ms.`, { code: "upstream_timeout" }),
        ),
      provider.timeoutMs,
    );
    try {
      const { res: upstream, headers: responseHeaders } = await this.send(processor, target.cloud, to, toUpstream(headers), body, abort);
      const status = upstream.statusCode ?? 502;
      responseHeaders[":status"] = String(status);
      const outcome = processor.responseHeaders(responseHeaders, false);
      if (outcome.kind === "respond") return send(res, outcome.response.status, outcome.response.headers, outcome.response.body);
      applyHeaderMutation(responseHeaders, outcome.mutation);
      if (outcome.streamResponseBody) {
        res.writeHead(status, forwardable(responseHeaders));
        // The headers leave at once only when no chunk is here to carry them (a provider answers
        // its headers before its first token): else they go with the first chunk, one write.
        if (upstream.readableLength === 0) res.flushHeaders();
        await relayStream(res, processor, upstream, this.idleGuarded(upstream, target.cloud), () => this.inFlight === 1);
        return;
      }
      const raw = target.cloud ? await this.readAllGuarded(upstream, target.cloud) : await readAll(upstream);
      // The answer leaves before the request's record is made (released in `finally`).
      processor.holdRecord();
      const answered = processor.responseBody(raw, true);
      const step = isPending(answered) ? await answered : answered;
      const out = step.kind === "continue" ? (step.mutation?.body ?? raw) : raw;
      if (step.kind === "continue") applyHeaderMutation(responseHeaders, step.mutation);
      // The processor may restate the status (a provider's 529 is a 503 to OpenAI clients).
      const outHeaders = forwardable(responseHeaders);
      outHeaders["content-length"] = String(out.length);
      send(res, Number(responseHeaders[":status"] ?? status), outHeaders, out);
    } catch (err) {
      const reason: unknown = abort.aborted ? abort.reason : err;
      const clientGone = abort.aborted && !(reason instanceof GatewayError);
      if (headers["x-gearbox-upstream"] === "edge" && !clientGone && !res.headersSent) {
        // As Envoy does, an unreachable edge agent becomes a local 503 that the processor sees
        // like any answer: the cascade upgrades it to the cloud.
        await this.answerLocally(res, processor, 503, "upstream connect error or disconnect/reset before headers");
        return;
      }
      if (target.cloud && !clientGone && !res.headersSent && processor.canFallBack) {
        // As through Envoy: an unreachable or timed-out provider is a local reply the processor
        // sees like any answer, and the call's fallback chain answers instead.
        const timedOut = reason instanceof GatewayError && reason.code === "upstream_timeout";
        await this.answerLocally(res, processor, timedOut ? 504 : 503, timedOut ? LOCAL_REPLY.timeout : LOCAL_REPLY.connect);
        return;
      }
      if (clientGone) return processor.abort(reason instanceof Error ? reason.message : String(reason));
      // The record says what the client gets (502, 504), not 499: only a client that left is 499.
      const failure =
        reason instanceof GatewayError
          ? reason
          : new GatewayError(502, "upstream_error", `Upstream '${provider.name}' could not be reached: ${(err as Error).message}`, {
              code: "upstream_unreachable",
              cause: err,
            });
      processor.fail(failure);
      if (!res.destroyed) sendResponse(res, processor.errorResponse(failure));
    } finally {
      clearTimeout(timer);
      res.off("close", onClose);
      // Right after the last write, in the same turn: the record (limits settled, log line,
      // metrics) costs the client no time, and a failure in it is not the call's.
      processor.releaseRecord();
    }
  }

  /**
   * A cloud call under the provider's connect and first-byte deadlines, retried before any byte
   * went to the client (`resilience/retrying.ts`, as Envoy's route retry policy does through
   * Envoy); an edge call as it is. The answer comes with its headers as a plain map, the one
   * the response phases then work on.
   */
  private async send(
    processor: RequestProcessor,
    provider: Provider | undefined,
    to: Destination,
    headers: Headers,
    body: Buffer,
    signal: Abortable,
  ): Promise<{ res: http.IncomingMessage; headers: Headers }> {
    if (!provider) {
      const res = await sendUpstream(to, headers, body, signal);
      return { res, headers: plainHeaders(res.headers) };
    }
    const t = timeoutsOf(provider);
    const deadlines = {
      connectMs: t.connectMs,
      firstByteMs: t.firstByteMs,
      timeout: (kind: "connect" | "first_byte") => upstreamTimeout(provider.name, kind, kind === "connect" ? t.connectMs : t.firstByteMs),
    };
    const result = await withRetries<{ res: http.IncomingMessage; headers: Headers }>({
      provider: provider.name,
      health: processor.providerHealth,
      retry: this.deps.runtime.current().config.resilience.retry,
      gated: false,
      signal,
      attempt: async () => {
        const res = await sendUpstream(to, headers, body, signal, deadlines);
        const answerHeaders = plainHeaders(res.headers);
        return { status: res.statusCode ?? 502, headers: answerHeaders, value: { res, headers: answerHeaders } };
      },
      // A retried answer is read to its end, so its connection goes back to the pool.
      discard: (answer) => void answer.res.resume(),
      onRetry: (cause, attempt) => processor.retried(cause, attempt),
    });
    if (result.kind === "answer") return result.value;
    if (result.kind === "error") throw result.error;
    throw new Error("a first attempt that is not gated is never refused");
  }

  /** A cloud answer's body, each chunk within the provider's idle deadline of the one before. */
  private idleGuarded(upstream: http.IncomingMessage, provider: Provider | undefined): AsyncIterable<Buffer> {
    if (!provider) return upstream as AsyncIterable<Buffer>;
    const idleMs = timeoutsOf(provider).idleMs;
    return idleGuarded(upstream, idleMs, () => upstreamTimeout(provider.name, "idle", idleMs));
  }

  /** A whole cloud answer, each chunk within the provider's idle deadline of the one before. */
  private readAllGuarded(upstream: http.IncomingMessage, provider: Provider): Promise<Buffer> {
    const idleMs = timeoutsOf(provider).idleMs;
    return readAllGuarded(upstream, idleMs, () => upstreamTimeout(provider.name, "idle", idleMs));
  }

  /** Runs the response phases on a reply Gearbox made up itself (Envoy's local reply). */
  private async answerLocally(res: http.ServerResponse, processor: RequestProcessor, status: number, text: string): Promise<void> {
    const responseHeaders: Headers = { ":status": String(status), "content-type": "text/plain" };
    processor.responseHeaders(responseHeaders, false);
    const step = await processor.responseBody(Buffer.from(text), true);
    const body = step.kind === "continue" ? (step.mutation?.body ?? Buffer.from(text)) : step.response.body;
    if (step.kind === "continue") applyHeaderMutation(responseHeaders, step.mutation);
    send(res, Number(responseHeaders[":status"] ?? status), Object.assign({}, forwardable(responseHeaders), { "content-length": String(body.length) }), body);
  }

  /**
   * Where Envoy would send the request: the provider cluster, or the edge agent the processor
   * named (Envoy's ORIGINAL_DST cluster reads it from ext_proc's dynamic metadata).
   */
  private upstreamTarget(headers: Headers, edgeEndpoint: string | undefined): { origin: URL; provider: { name: string; timeoutMs: number }; cloud?: Provider } {
    const upstream = headers["x-gearbox-upstream"] ?? "";
    if (upstream === "edge") {
      if (edgeEndpoint === undefined) throw new Error("processor chose the edge without naming an agent");
      const endpoint = edgeEndpoint;
      return { origin: new URL(`http://${endpoint}`), provider: { name: `edge ${endpoint}`, timeoutMs: this.deps.runtime.current().config.edge.timeout_ms } };
    }
    const provider = this.deps.runtime.current().config.providers.find((p) => p.name === upstream);
    if (!provider) throw new Error(`processor chose unknown upstream '${upstream}'`);
    return { origin: provider.baseUrl, provider, cloud: provider };
  }

  /** `GET /v1/models/{id}` (the OpenAI SDK's `models.retrieve`): a model some provider lists or the default provider would take, else OpenAI's 404. */
  private model(res: http.ServerResponse, raw: string): void {
    let id: string;
    try {
      id = decodeURIComponent(raw);
    } catch {
      id = raw;
    }
    const found = this.models().data.find((m) => m.id === id);
    if (found) return sendJson(res, 200, found);
    // A model no provider lists goes to the default provider, as a call for it would.
    const fallback = this.deps.runtime.current().config.providers.find((p) => p.isDefault);
    if (fallback && id.trim() !== "") return sendJson(res, 200, { id, object: "model", created: 0, owned_by: fallback.name });
    sendError(
      res,
      new GatewayError(404, "invalid_request_error", `The model '${id}' does not exist or you do not have access to it.`, {
        param: "model",
        code: "model_not_found",
      }),
    );
  }

  private models(): { object: "list"; data: { id: string; object: "model"; created: number; owned_by: string }[]; endpoints: string[] } {
    const data = this.deps.runtime
      .current()
      .config.providers.flatMap((p) => [...p.models].map((id) => ({ id, object: "model" as const, created: 0, owned_by: p.name })));
    return { object: "list", data, endpoints: allEndpoints().map((e) => e.path) };
  }
}

export async function startFrontDoor(deps: ProcessorDeps, port: number, host = "0.0.0.0", devices?: DeviceRoutes): Promise<FrontDoor> {
  const handler = new FrontDoorHandler(deps, devices);
  const server = http.createServer((req, res) => handler.handle(req, res));
  server.keepAliveTimeout = 65_000;
  return listenHttp(server, port, host);
}
