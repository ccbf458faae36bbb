/**
 * The device API on the front door (`/v1/device/…`), for the device SDKs.
 *
 * Transport: one long-lived HTTP response per device, as server-sent events, opened by the hello
 * (`POST /v1/device/connect`, the hello as the body); heartbeats, acknowledgements, decisions and
 * outcomes are plain JSON POSTs on the same keep-alive connection pool. Why not gRPC: Python's
 * standard library speaks neither HTTP/2 nor WebSocket, but both SDKs' standard libraries speak
 * HTTP/1.1 and read a streamed response line by line; SSE passes every HTTP proxy a device sits
 * behind, and the channel shares the front door's port, TLS and key with the calls themselves.
 *
 *   POST /v1/device/connect    hello → 200 text/event-stream (welcome, policy, command, closed)
 *   POST /v1/device/heartbeat  {session, in_flight} → {ok, policy_version}; 404 unknown_session
 *   POST /v1/device/ack        {session, command | policy_version, ok, …} → {ok}
 *   POST /v1/device/decide     a chat completions body → the routing instruction
 *   POST /v1/device/outcome    {decision_id, confidence, usage, status} → keep | upgrade (the cloud's completion)
 *
 * Every request carries the device's call key; a key revoked while connected ends the session at
 * its next heartbeat (401). Bad input is an OpenAI-shaped error with its status (400 bad JSON or
 * field, 401, 403, 404, 405, 413 a hello over `devices.max_hello_bytes`, 415); the server stays up.
 */
import type http from "node:http";
import { GatewayError, invalidRequest, toErrorResponse } from "../../common/errors.ts";
import type { Logger } from "../../common/telemetry/logger.ts";
import { canonicalIp } from "../client-ip.ts";
import type { Runtime } from "../runtime/runtime.ts";
import { DeviceDecisions, type DecisionDeps, type DeviceRequest } from "./decisions.ts";
import type { DeviceStats } from "../telemetry/device-metrics.ts";
import { DeviceRegistry, type ChannelSink } from "./registry.ts";
import { ackSchema, heartbeatSchema, helloSchema, parseMessage } from "./wire.ts";

export const DEVICE_PREFIX = "/v1/device/";

/** The request's headers as plain lower-case strings. */
function plain(req: http.IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : v;
  return out;
}

function sendJson(res: http.ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = Buffer.from(JSON.stringify(value));
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": String(body.length) });
  res.end(body);
}

function sendError(res: http.ServerResponse, err: unknown): void {
  if (res.headersSent) return void res.destroy();
  const { status, headers, body } = toErrorResponse(err);
  res.writeHead(status, { ...headers, "content-length": String(body.length) });
  res.end(body);
}

/** The body, up to `limit` bytes (413 past it, without reading on). */
async function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new GatewayError(413, "invalid_request_error", `The request body exceeds ${limit} bytes.`, { code: "request_too_large" });
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

function json(body: Buffer, what: string): unknown {
  try {
    return JSON.parse(body.toString("utf8")) as unknown;
  } catch (err) {
    throw new GatewayError(400, "invalid_request_error", `The ${what} is not valid JSON: ${(err as Error).message}`, { code: "invalid_json", param: "body" });
  }
}

function checked<T>(result: { ok: true; value: T } | { ok: false; errors: string[] }, code: string): T {
  if (result.ok) return result.value;
  throw invalidRequest(result.errors.join("; "), result.errors[0]?.split(":")[0], code);
}

/** An SSE stream on `res` as a registry sink. */
function sseSink(res: http.ServerResponse): ChannelSink {
  return {
    send(event, data) {
      if (!res.writableEnded && !res.destroyed) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    end() {
      if (!res.writableEnded) res.end();
    },
  };
}

export interface DeviceApiDeps extends Omit<DecisionDeps, "registry"> {
  runtime: Runtime;
  logger: Logger;
}

export class DeviceApi {
  readonly registry: DeviceRegistry;
  readonly decisions: DeviceDecisions;

  constructor(private readonly deps: DeviceApiDeps) {
    this.registry = new DeviceRegistry({ config: () => deps.runtime.current().config, logger: deps.logger });
    this.decisions = new DeviceDecisions({ ...deps, registry: this.registry });
  }

  /** True when `path` is the device API's (the front door hands such requests here). */
  static owns(path: string): boolean {
    return path.startsWith(DEVICE_PREFIX);
  }

  handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.route(req, res).catch((err: unknown) => {
      if (!(err instanceof GatewayError)) this.deps.logger.error({ err }, "device API request failed");
      sendError(res, err);
    });
  }

  /** The device transport's counters and gauges, for `/metrics` (`telemetry/device-metrics.ts`). */
  stats(): DeviceStats {
    return {
      connected: this.registry.connected(),
      connects: this.registry.connects,
      ended: this.registry.ended,
      decisions: this.decisions.outcomes,
      pending: this.decisions.size,
    };
  }

  /** Ends every device's stream and releases held decisions. */
  close(): void {
    this.registry.close();
    this.decisions.close();
  }

  private async route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const verb = path.slice(DEVICE_PREFIX.length);
    if (!["connect", "heartbeat", "ack", "decide", "outcome"].includes(verb))
      throw new GatewayError(404, "invalid_request_error", `Invalid URL (${req.method ?? "GET"} ${path})`, { code: "unknown_url" });
    if (req.method !== "POST")
      throw new GatewayError(405, "invalid_request_error", `Method ${req.method ?? "GET"} is not allowed on ${path}; use POST.`, {
        code: "method_not_allowed",
        headers: { allow: "POST" },
      });
    const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
    if (type !== "application/json")
      throw new GatewayError(415, "invalid_request_error", `Content-Type must be application/json, got '${req.headers["content-type"] ?? "(none)"}'.`, {
        code: "unsupported_media_type",
      });
    const config = this.deps.runtime.current().config;
    const who: DeviceRequest = { headers: plain(req), address: canonicalIp(req.socket.remoteAddress) };
    const limit = verb === "connect" ? config.devices.max_hello_bytes : verb === "decide" ? config.limits.max_request_bytes : 64 * 1024;
    const body = await readBody(req, limit).catch((err: unknown) => {
      res.setHeader("connection", "close");
      throw err;
    });
    switch (verb) {
      case "connect":
        return this.connect(who, body, res);
      case "heartbeat":
        return this.heartbeat(who, body, res);
      case "ack":
        return this.ack(who, body, res);
      case "decide": {
        const decided = await this.decisions.decide(who, body);
        if (!decided.ok) throw decided.errors[0] ?? invalidRequest("No decision.");
        return sendJson(res, 200, decided.value);
      }
      case "outcome": {
        const judged = await this.decisions.outcome(who, json(body, "outcome"));
        if (!judged.ok) throw judged.errors[0] ?? invalidRequest("No verdict.");
        const v = judged.value;
        if (v.action === "error") {
          res.writeHead(v.status, { "content-type": "application/json", "content-length": String(v.body.length) });
          return void res.end(v.body);
        }
        return sendJson(res, 200, v, { "x-gearbox-route": v.route === "device" ? "edge" : "cloud" });
      }
      default:
        throw new Error(`unrouted device verb ${verb}`);
    }
  }

  private async connect(who: DeviceRequest, body: Buffer, res: http.ServerResponse): Promise<void> {
    const caller = await this.decisions.caller(who);
    if (!caller.ok) throw firstError(caller.errors);
    const hello = checked(parseMessage(helloSchema, json(body, "hello"), "hello"), "invalid_hello");
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store", connection: "keep-alive", "x-accel-buffering": "no" });
    res.flushHeaders();
    const sink = sseSink(res);
    const opened = this.registry.open(caller.value.tenant, hello, sink);
    if (!opened.ok) {
      const err = opened.errors[0];
      sink.send("error", toErrorResponse(err).body.toString("utf8"));
      return sink.end();
    }
    const session = opened.value;
    res.socket?.setKeepAlive(true, 30_000);
    res.on("close", () => this.registry.disconnected(session));
  }

  private async heartbeat(who: DeviceRequest, body: Buffer, res: http.ServerResponse): Promise<void> {
    const msg = checked(parseMessage(heartbeatSchema, json(body, "heartbeat"), "heartbeat"), "invalid_heartbeat");
    const session = await this.sessionOf(who, msg.session);
    this.registry.heartbeat(session, msg.in_flight);
    sendJson(res, 200, { ok: true, policy_version: this.registry.policy().version });
  }

  private async ack(who: DeviceRequest, body: Buffer, res: http.ServerResponse): Promise<void> {
    const msg = checked(parseMessage(ackSchema, json(body, "ack"), "ack"), "invalid_ack");
    const session = await this.sessionOf(who, msg.session);
    checked(this.registry.ack(session, msg), "unknown_command");
    sendJson(res, 200, { ok: true });
  }

  /** The live session `id` of the caller; a key no longer valid ends it (401). */
  private async sessionOf(who: DeviceRequest, id: string) {
    const caller = await this.decisions.caller(who);
    if (!caller.ok) {
      // The key was revoked (or the tenant removed) while connected: the session ends with it.
      const live = this.registry.sessionById(id);
      if (live) this.registry.remove(live, "revoked");
      throw firstError(caller.errors);
    }
    const session = this.registry.session(caller.value.tenant, id);
    if (!session)
      throw new GatewayError(404, "not_found_error", `No session '${id}': it expired or the gateway restarted; connect again.`, {
        code: "unknown_session",
        param: "session",
      });
    return session;
  }
}

function firstError(errors: GatewayError[]): GatewayError {
  return errors[0] ?? new GatewayError(401, "authentication_error", "Authentication failed.");
}
