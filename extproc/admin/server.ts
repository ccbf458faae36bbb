/**
 * The admin HTTP API (port 8081, `GEARBOX_ADMIN_PORT`): tenants, keys, who is throttled, the audit
 * log. Every request but `/healthz` is authenticated with an admin key and leaves one audit entry
 * (who, what, on what, when, from where, result), refused attempts included. Errors are
 * OpenAI-shaped JSON. Bind it to a private address: it is the gateway's control surface.
 */
import http from "node:http";
import { listenHttp, type Listening } from "../http/listen.ts";
import { GatewayError, toErrorResponse } from "../../common/errors.ts";
import { bootstrapKeyRecord } from "../governance/keys.ts";
import type { ApiKeyRecord, AuditEntry } from "../governance/model.ts";
import { identifyAdmin } from "./admin-auth.ts";
import type { AdminDeps } from "./deps.ts";
import { keyRoutes } from "./key-routes.ts";
import { readRoutes } from "./read-routes.ts";
import type { Context, Reply, Route } from "./route.ts";
import { tenantRoutes } from "./tenant-routes.ts";

export type { AdminDeps, ThrottledCaller } from "./deps.ts";

export type AdminServer = Listening;

const ROUTES: Route[] = [...tenantRoutes, ...keyRoutes, ...readRoutes];
const MAX_BODY_BYTES = 64 * 1024;

function send(res: http.ServerResponse, status: number, body: Buffer, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": String(body.length), "cache-control": "no-store" });
  res.end(body);
}

/** The JSON body; a 413 over the limit, a 400 when it is not JSON. */
async function readJson(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES)
      throw new GatewayError(413, "invalid_request_error", `The request body exceeds ${MAX_BODY_BYTES} bytes.`, { code: "request_too_large" });
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new GatewayError(400, "invalid_request_error", `The request body is not valid JSON: ${(err as Error).message}`, {
      code: "invalid_json",
      param: "body",
    });
  }
}

/** The route for a method and path, or the error that says why there is none (404, 405). */
function match(method: string, path: string, routes: readonly Route[]): { route: Route; params: string[] } | GatewayError {
  const allowed: string[] = [];
  for (const route of routes) {
    const m = route.path.exec(path);
    if (!m) continue;
    if (route.method === method) {
      try {
        return { route, params: m.slice(1).map((p) => decodeURIComponent(p)) };
      } catch {
        return new GatewayError(400, "invalid_request_error", `Invalid URL encoding in ${path}.`, { code: "invalid_url" });
      }
    }
    allowed.push(route.method);
  }
  if (allowed.length === 0) return new GatewayError(404, "not_found_error", `Invalid URL (${method} ${path}).`, { code: "unknown_url" });
  return new GatewayError(405, "invalid_request_error", `${method} is not allowed on ${path}.`, {
    code: "method_not_allowed",
    headers: { allow: allowed.join(", ") },
  });
}

class AdminHandler {
  private readonly bootstrap: ApiKeyRecord | undefined;
  private readonly routes: readonly Route[];

  constructor(private readonly deps: AdminDeps) {
    this.routes = [...ROUTES, ...(deps.routes ?? [])];
    this.bootstrap = deps.bootstrapKey === undefined ? undefined : bootstrapKeyRecord(deps.bootstrapKey);
  }

  handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.serve(req, res).catch((err: unknown) => {
      this.deps.logger.error({ err }, "admin request failed");
      if (!res.headersSent) {
        const { status, headers, body } = toErrorResponse(err);
        send(res, status, body, headers);
      } else res.destroy();
    });
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://admin");
    const method = req.method ?? "GET";
    if (method === "GET" && url.pathname === "/healthz") return send(res, 200, Buffer.from('{"status":"ok"}'));
    const now = this.deps.now?.() ?? new Date();
    const from = req.socket.remoteAddress ?? "unknown";
    const headers = Object.fromEntries(Object.entries(req.headers).flatMap(([k, v]) => (typeof v === "string" ? [[k, v]] : [])));
    const identity = await identifyAdmin(headers, from, this.deps, this.bootstrap);
    const matched = match(method, url.pathname, this.routes);
    const action = matched instanceof GatewayError ? `${method} ${url.pathname}` : matched.route.action;
    const entry: AuditEntry = { at: now.toISOString(), actor: identity.actor, action, target: url.pathname, from, result: "ok" };
    let reply: Reply | GatewayError;
    if (!identity.ok) reply = identity.error;
    else if (matched instanceof GatewayError) reply = matched;
    else {
      entry.target = matched.params[0] ?? url.pathname;
      const ctx: Context = { deps: this.deps, actor: identity.record, params: matched.params, query: url.searchParams, now, body: () => readJson(req) };
      reply = await matched.route.handle(ctx).catch((err: unknown) => this.failure(err));
    }
    if (reply instanceof GatewayError) {
      entry.result = reply.code ?? reply.type;
      await this.record(entry);
      const { status, headers: errorHeaders, body } = toErrorResponse(reply);
      return send(res, status, body, errorHeaders);
    }
    if (reply.target !== undefined) entry.target = reply.target;
    if (reply.details !== undefined) entry.details = reply.details;
    await this.record(entry);
    send(res, reply.status, Buffer.from(JSON.stringify(reply.body)));
  }

  /** A handler's failure as the error to answer and audit; a fault that is not a `GatewayError` is logged. */
  private failure(err: unknown): GatewayError {
    if (err instanceof GatewayError) return err;
    this.deps.logger.error({ err }, "admin action failed");
    return new GatewayError(500, "server_error", "Internal error in the admin API.", { code: "internal_error", cause: err });
  }

  /**
   * Appends to the audit log. If the log cannot be written, the entry goes to the error log in
   * full and the request is still answered (the action has already happened).
   */
  private async record(entry: AuditEntry): Promise<void> {
    // One log line per admin action too (the entry holds key ids and prefixes, never a key or secret).
    this.deps.logger.info({ audit: entry }, "admin action");
    try {
      await this.deps.audit.append(entry);
    } catch (err) {
      this.deps.logger.error({ err, audit: entry }, "audit log append failed; the entry is in this log line");
    }
  }
}

/** Starts the admin API on `port` (0: any free port) and `host`. */
export async function startAdminServer(deps: AdminDeps, port: number, host = "0.0.0.0"): Promise<AdminServer> {
  const handler = new AdminHandler(deps);
  const server = http.createServer((req, res) => handler.handle(req, res));
  return listenHttp(server, port, host);
}
