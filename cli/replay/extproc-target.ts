/**
 * An ext_proc address as a replay target: this client plays the part of Envoy's ext_proc HTTP
 * filter and router for one request at a time, with the processing mode Gearbox ships
 * (`envoy/*.yaml`: request headers SEND, request body BUFFERED, response headers SEND, response
 * body BUFFERED, `allow_mode_override`). It follows Envoy's order and rules
 * (`source/extensions/filters/http/ext_proc/ext_proc.cc`; the protos under
 * `@grpc/grpc-js-xds/deps/envoy-api/envoy/service/ext_proc/v3/`):
 *
 * - one `Process` stream per HTTP request; one answer per message, in order; an answer that only
 *   carries `override_message_timeout` extends the wait and is not the answer;
 * - request headers (`:method :path :authority :scheme`, lower-case names, values in `raw_value`,
 *   `x-request-id` added as the connection manager does), then the whole body with `end_of_stream`;
 * - an `immediate_response` is the client's answer (Envoy's local reply; the ext_proc filter does
 *   not process its own local reply again);
 * - header and body mutations apply to the request; the router then picks the cluster named by
 *   `x-gearbox-upstream` (`--cluster name=url`; the edge cluster is ORIGINAL_DST: the
 *   `gearbox.edge/endpoint` dynamic metadata, else the `x-gearbox-edge-endpoint` header), or the
 *   default cluster (`--upstream`) for a request Gearbox let through untouched; no cluster → 503,
 *   a local reply that still passes the response path, as Envoy's router replies do;
 * - response headers (`:status` and the upstream's), then the body: BUFFERED as one message, or
 *   STREAMED (when the headers answer sets `mode_override.response_body_mode: STREAMED`, as
 *   Gearbox does for `text/event-stream`) as one message per chunk and an empty `end_of_stream`;
 * - observability mode (`--shadow`): every message carries `observability_mode: true` and no
 *   answer is awaited (Envoy's send-and-go); the request goes on as sent to the default cluster, or
 *   stops after the body when there is none (Gearbox records its decision at the body).
 *
 * Not modelled: trailers, request body STREAMED, mutation rules (Gearbox's mutations are allowed
 * by the shipped rules), retries, and timeouts other than one per request (`timeoutMs`).
 */
import http from "node:http";
import { randomUUID } from "node:crypto";
import * as grpc from "@grpc/grpc-js";
import { extProcPackage } from "../../common/envoy/protos.ts";
import { httpStatusNumber } from "../../common/envoy/http-status.ts";
import type { HttpHeaders } from "../../proto/generated/envoy/service/ext_proc/v3/HttpHeaders.ts";
import type { HeaderMutation__Output } from "../../proto/generated/envoy/service/ext_proc/v3/HeaderMutation.ts";
import type { ProcessingRequest } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingRequest.ts";
import type { ProcessingResponse__Output } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingResponse.ts";
import type { Struct__Output } from "../../proto/generated/google/protobuf/Struct.ts";
import type { Target, TargetRequest, TargetResponse } from "./target.ts";

export interface ExtProcTargetOptions {
  /** `host:port` of the ext_proc gRPC server. */
  address: string;
  /** Cluster name (the `x-gearbox-upstream` value) → base URL. */
  clusters: Record<string, string>;
  /** Where a request goes that Gearbox did not route (Envoy's default route: what the app dialled). */
  upstream: string | undefined;
  /** The `:authority` the app dialled (default: the default cluster's host, else api.openai.com). */
  authority?: string;
  timeoutMs: number;
  sockets: number;
}

type Headers = Map<string, string>;
type Call = grpc.ClientDuplexStream<ProcessingRequest, ProcessingResponse__Output>;

const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection", "te", "trailer"]);
const EDGE_METADATA = { namespace: "gearbox.edge", key: "endpoint" };

class StreamClosed extends Error {}

/** One `Process` stream, read one answer at a time. */
class Exchange {
  private readonly queue: ProcessingResponse__Output[] = [];
  private waiting: ((r: ProcessingResponse__Output | Error) => void) | undefined;
  private ended: Error | undefined;

  constructor(readonly call: Call) {
    call.on("data", (r: ProcessingResponse__Output) => {
      // `override_message_timeout` alone only extends Envoy's timer: not an answer.
      if (r.override_message_timeout && r.response === undefined) return;
      if (this.waiting) {
        const w = this.waiting;
        this.waiting = undefined;
        w(r);
      } else this.queue.push(r);
    });
    call.on("error", () => undefined);
    call.on("status", (s: grpc.StatusObject) => {
      this.ended = new StreamClosed(s.code === grpc.status.OK ? "ext_proc closed the stream" : `ext_proc stream error: ${grpc.status[s.code]} ${s.details}`);
      if (this.waiting) {
        const w = this.waiting;
        this.waiting = undefined;
        w(this.ended);
      }
    });
  }

  send(message: ProcessingRequest): void {
    this.call.write(message);
  }

  async ask(message: ProcessingRequest): Promise<ProcessingResponse__Output> {
    this.send(message);
    const queued = this.queue.shift();
    if (queued) return queued;
    if (this.ended) throw this.ended;
    const answer = await new Promise<ProcessingResponse__Output | Error>((resolve) => (this.waiting = resolve));
    if (answer instanceof Error) throw answer;
    return answer;
  }

  close(): void {
    this.call.end();
  }

  /**
   * Half-closes and waits for the server to end the stream: in observability mode nothing is
   * answered, so this is how the client knows Gearbox has read every message (Envoy keeps such a
   * stream open for `deferred_close_timeout`, 5 s by default, for the same reason).
   */
  async drain(): Promise<void> {
    this.call.end();
    if (this.ended) return;
    await new Promise<void>((resolve) => this.call.on("status", () => resolve()));
  }

  cancel(): void {
    this.call.cancel();
  }
}

function protoHeaders(headers: Headers, endOfStream = false): HttpHeaders {
  // Proto3 defaults are left off the wire, as Envoy's C++ protobuf does.
  return {
    headers: { headers: [...headers].map(([key, value]) => ({ key, raw_value: Buffer.from(value, "latin1") })) },
    ...(endOfStream && { end_of_stream: true }),
  };
}

function applyMutation(headers: Headers, mutation: HeaderMutation__Output | undefined): void {
  if (!mutation) return;
  for (const name of mutation.remove_headers ?? []) if (!name.startsWith(":") && name !== "host") headers.delete(name.toLowerCase());
  for (const option of mutation.set_headers ?? []) {
    const key = option.header?.key?.toLowerCase();
    if (!key) continue;
    const raw = option.header?.raw_value;
    const value = raw && raw.length > 0 ? raw.toString("latin1") : (option.header?.value ?? "");
    const append = option.append?.value === true || option.append_action === "APPEND_IF_EXISTS_OR_ADD";
    const had = headers.get(key);
    headers.set(key, append && had !== undefined ? `${had},${value}` : value);
  }
}

function metadataString(struct: Struct__Output | undefined, namespace: string, key: string): string | undefined {
  const ns = struct?.fields?.[namespace];
  const value = ns?.structValue?.fields?.[key];
  return value?.stringValue ?? undefined;
}

/** The body an answer leaves: replaced, cleared, or as it was. */
function mutatedBody(body: Buffer, answer: { response?: { body_mutation?: { body?: Buffer; clear_body?: boolean } } } | undefined): Buffer {
  const m = answer?.response?.body_mutation;
  if (!m) return body;
  if (m.clear_body) return Buffer.alloc(0);
  return m.body !== undefined ? Buffer.from(m.body) : body;
}

function plainHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of headers) if (!k.startsWith(":")) out[k] = v;
  return out;
}

export function extProcTarget(options: ExtProcTargetOptions): Target {
  const { ExternalProcessor } = extProcPackage().envoy.service.ext_proc.v3;
  const client = new ExternalProcessor(options.address, grpc.credentials.createInsecure(), {
    "grpc.max_receive_message_length": -1,
    "grpc.max_send_message_length": -1,
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.sockets });
  const authority = options.authority ?? (options.upstream ? new URL(options.upstream).host : "api.openai.com");

  /** The router: the cluster's base URL for the request as mutated, or why there is none. */
  function route(headers: Headers, metadata: Struct__Output | undefined): string | { local: number; reason: string } {
    const upstream = headers.get("x-gearbox-upstream");
    if (upstream === undefined) return options.upstream ?? { local: 503, reason: "no default cluster (--upstream) for a request Gearbox did not route" };
    if (upstream === "edge") {
      const endpoint = metadataString(metadata, EDGE_METADATA.namespace, EDGE_METADATA.key) ?? headers.get("x-gearbox-edge-endpoint");
      return endpoint ? `http://${endpoint}` : { local: 503, reason: "edge route without an endpoint" };
    }
    return options.clusters[upstream] ?? { local: 503, reason: `no cluster '${upstream}' (--cluster ${upstream}=<url>)` };
  }

  function forward(base: string, headers: Headers, body: Buffer): Promise<{ status: number; headers: Headers; res: http.IncomingMessage } | { error: string }> {
    const url = new URL(base);
    const out = plainHeaders(headers);
    for (const h of HOP_BY_HOP) delete out[h];
    out["content-length"] = String(body.length);
    out.host = url.host;
    return new Promise((resolve) => {
      const req = http.request(
        { agent, hostname: url.hostname, port: url.port, method: headers.get(":method") ?? "POST", path: headers.get(":path") ?? "/", headers: out },
        (res) => {
          const h: Headers = new Map([[":status", String(res.statusCode ?? 0)]]);
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) h.set(k, Array.isArray(v) ? v.join(",") : v);
          resolve({ status: res.statusCode ?? 0, headers: h, res });
        },
      );
      req.on("error", (err: NodeJS.ErrnoException) => resolve({ error: `upstream ${url.host}: ${err.code ?? err.message}` }));
      req.end(body);
    });
  }

  async function exchange(x: Exchange, request: TargetRequest, started: number): Promise<TargetResponse> {
    const headers: Headers = new Map([
      [":method", "POST"],
      [":path", request.path],
      [":authority", authority],
      [":scheme", "http"],
      ["x-forwarded-proto", "http"],
      ["x-request-id", randomUUID()],
    ]);
    for (const [k, v] of Object.entries(request.headers)) headers.set(k.toLowerCase(), v);
    headers.set("content-length", String(request.body.length));
    const done = (status: number, h: Headers, body: Buffer, firstAt?: number): TargetResponse => {
      const now = performance.now();
      return {
        status,
        headers: plainHeaders(h),
        body,
        latencyMs: now - started,
        ttftMs: firstAt === undefined ? (body.length > 0 ? now - started : undefined) : firstAt - started,
      };
    };
    if (request.shadow) {
      // Observability mode: send and go; nothing Gearbox answers is waited for or applied.
      x.send({ request_headers: protoHeaders(headers), observability_mode: true });
      x.send({ request_body: { body: request.body, end_of_stream: true }, observability_mode: true });
      if (!options.upstream) {
        await x.drain();
        return done(0, new Map(), Buffer.alloc(0));
      }
    } else {
      const head = await x.ask({ request_headers: protoHeaders(headers) });
      if (head.immediate_response) return immediate(head);
      applyMutation(headers, head.request_headers?.response?.header_mutation);
    }
    let body = request.body;
    let metadata: Struct__Output | undefined;
    if (!request.shadow) {
      const answer = await x.ask({ request_body: { body, end_of_stream: true } });
      if (answer.immediate_response) return immediate(answer);
      applyMutation(headers, answer.request_body?.response?.header_mutation);
      body = mutatedBody(body, answer.request_body);
      metadata = answer.dynamic_metadata;
      if (body.length !== request.body.length || headers.has("content-length")) headers.set("content-length", String(body.length));
    }
    const cluster = route(headers, metadata);
    let status: number;
    let responseHeaders: Headers;
    let chunks: AsyncIterable<Buffer> | Iterable<Buffer>;
    if (typeof cluster === "string") {
      const up = await forward(cluster, headers, body);
      if ("error" in up) {
        // Envoy's router: 503 "upstream connect error or disconnect/reset before headers".
        const reply = Buffer.from(`upstream connect error or disconnect/reset before headers. ${up.error}`);
        status = 503;
        responseHeaders = new Map([
          [":status", "503"],
          ["content-type", "text/plain"],
          ["content-length", String(reply.length)],
        ]);
        chunks = [reply];
      } else {
        status = up.status;
        responseHeaders = up.headers;
        chunks = up.res;
      }
    } else {
      const reply = Buffer.from(cluster.reason);
      status = cluster.local;
      responseHeaders = new Map([
        [":status", String(status)],
        ["content-type", "text/plain"],
        ["content-length", String(reply.length)],
      ]);
      chunks = [reply];
    }
    if (request.shadow) {
      const all: Buffer[] = [];
      let first: number | undefined;
      for await (const c of chunks) {
        first ??= performance.now();
        all.push(c);
      }
      const whole = Buffer.concat(all);
      x.send({ response_headers: protoHeaders(responseHeaders), observability_mode: true });
      x.send({ response_body: { body: whole, end_of_stream: true }, observability_mode: true });
      const response = done(status, responseHeaders, whole, first);
      await x.drain();
      return response;
    }
    const headAnswer = await x.ask({ response_headers: protoHeaders(responseHeaders) });
    if (headAnswer.immediate_response) return immediate(headAnswer);
    applyMutation(responseHeaders, headAnswer.response_headers?.response?.header_mutation);
    const streamed = headAnswer.mode_override?.response_body_mode === "STREAMED";
    if (streamed) {
      // STREAMED: one message per chunk, answered in order; content-length goes (Envoy removes it).
      responseHeaders.delete("content-length");
      const out: Buffer[] = [];
      let first: number | undefined;
      for await (const c of chunks) {
        const answer = await x.ask({ response_body: { body: c } });
        if (answer.immediate_response) return immediate(answer);
        const piece = mutatedBody(c, answer.response_body);
        if (piece.length > 0) first ??= performance.now();
        out.push(piece);
      }
      const last = await x.ask({ response_body: { end_of_stream: true } });
      const tail = mutatedBody(Buffer.alloc(0), last.response_body);
      if (tail.length > 0) {
        first ??= performance.now();
        out.push(tail);
      }
      return done(Number(responseHeaders.get(":status") ?? status), responseHeaders, Buffer.concat(out), first);
    }
    const all: Buffer[] = [];
    for await (const c of chunks) all.push(c);
    const answer = await x.ask({ response_body: { body: Buffer.concat(all), end_of_stream: true } });
    if (answer.immediate_response) return immediate(answer);
    // BUFFERED: the body answer's header mutations still apply (the headers are held).
    applyMutation(responseHeaders, answer.response_body?.response?.header_mutation);
    const final = mutatedBody(Buffer.concat(all), answer.response_body);
    return done(Number(responseHeaders.get(":status") ?? status), responseHeaders, final);

    function immediate(r: ProcessingResponse__Output): TargetResponse {
      const i = r.immediate_response!;
      const h: Headers = new Map();
      applyMutation(h, i.headers);
      return done(httpStatusNumber(i.status?.code) || 200, h, i.body ? Buffer.from(i.body) : Buffer.alloc(0));
    }
  }

  return {
    kind: "ext_proc",
    async send(request: TargetRequest): Promise<TargetResponse> {
      const started = performance.now();
      const x = new Exchange(client.Process());
      const timer = setTimeout(() => x.cancel(), options.timeoutMs);
      try {
        return await exchange(x, request, started);
      } catch (err) {
        return {
          status: 0,
          headers: {},
          body: Buffer.alloc(0),
          latencyMs: performance.now() - started,
          ttftMs: undefined,
          error: err instanceof Error ? err.message : String(err),
        };
      } finally {
        clearTimeout(timer);
        x.close();
      }
    },
    close() {
      client.close();
      agent.destroy();
      return Promise.resolve();
    },
  };
}
