/**
 * The shape of an admin route and what its handler gets. Handlers return a reply or throw a
 * `GatewayError`; the server turns either into a response and one audit entry.
 */
import type { z } from "zod";
import { GatewayError } from "../../common/errors.ts";
import type { ApiKeyRecord } from "../governance/model.ts";
import type { AdminDeps } from "./deps.ts";

export interface Context {
  deps: AdminDeps;
  /** The admin key making the request. */
  actor: ApiKeyRecord;
  /** The route's captured path segments, decoded. */
  params: string[];
  query: URLSearchParams;
  now: Date;
  /** The JSON body (400 `invalid_json` when it is not JSON). */
  body(): Promise<unknown>;
}

export interface Reply {
  status: number;
  body: unknown;
  /** What the action acted on, for the audit log, when not the first path segment. */
  target?: string;
  details?: Record<string, unknown>;
}

export interface Route {
  method: "GET" | "PUT" | "POST" | "DELETE";
  path: RegExp;
  /** The audit log's name for it: `tenants.put`, `keys.revoke`… */
  action: string;
  handle(ctx: Context): Promise<Reply>;
}

/** A tenant-scoped admin key may act only on its own tenant. */
export function requireTenantAccess(actor: ApiKeyRecord, tenant: string | undefined): void {
  if (actor.tenant !== undefined && actor.tenant !== tenant) {
    throw new GatewayError(403, "permission_error", `This admin key manages tenant '${actor.tenant}' only.`, { code: "insufficient_permissions" });
  }
}

/** Only a global admin key (no tenant) may do this. */
export function requireGlobalAdmin(actor: ApiKeyRecord, what: string): void {
  if (actor.tenant !== undefined) {
    throw new GatewayError(403, "permission_error", `Only a global admin key may ${what}.`, { code: "insufficient_permissions" });
  }
}

/** A request body checked against `schema`, or a 400 naming every bad field (its `param` the first). */
export function parseBody<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const fields = result.error.issues.map((issue) => ({
    path: issue.path.map((k, i) => (typeof k === "number" ? `[${k}]` : i === 0 ? String(k) : `.${String(k)}`)).join(""),
    message: issue.message,
  }));
  const message = fields.map((f) => `${f.path || "(body)"}: ${f.message}`).join("; ");
  throw new GatewayError(400, "invalid_request_error", `Invalid request body: ${message}`, { code: "invalid_field", param: fields[0]?.path || "body" });
}

export function notFound(what: string, id: string, code: string): GatewayError {
  return new GatewayError(404, "not_found_error", `No ${what} '${id}'.`, { code });
}
