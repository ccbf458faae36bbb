/**
 * `GET /v1/limits` (who is throttled now, from the limiter) and `GET /v1/audit` (the audit log,
 * newest first, paged with `limit` and `before`; global admins only: entries span tenants).
 * The audit log has no route that changes it.
 */
import { GatewayError } from "../../common/errors.ts";
import { AUDIT_PAGE_MAX } from "../store/audit-log.ts";
import { requireGlobalAdmin, type Context, type Reply, type Route } from "./route.ts";

async function limits(ctx: Context): Promise<Reply> {
  const all = await ctx.deps.throttled();
  const scope = ctx.actor.tenant;
  const data = scope === undefined ? all : all.filter((t) => t.tenant === scope);
  return { status: 200, body: { object: "list", data }, target: scope ?? "*" };
}

async function audit(ctx: Context): Promise<Reply> {
  requireGlobalAdmin(ctx.actor, "read the audit log");
  const limit = ctx.query.get("limit");
  const before = ctx.query.get("before");
  if (limit !== null && !(/^\d+$/.test(limit) && Number(limit) >= 1 && Number(limit) <= AUDIT_PAGE_MAX)) {
    throw new GatewayError(400, "invalid_request_error", `limit must be an integer from 1 to ${AUDIT_PAGE_MAX}.`, { code: "invalid_field", param: "limit" });
  }
  if (before !== null && !/^\d+(-\d+)?$/.test(before)) {
    throw new GatewayError(400, "invalid_request_error", "before must be an entry id from a previous page.", { code: "invalid_field", param: "before" });
  }
  const entries = await ctx.deps.audit.list({ ...(limit !== null && { limit: Number(limit) }), ...(before !== null && { before }) });
  return { status: 200, body: { object: "list", data: entries }, target: "*" };
}

export const readRoutes: Route[] = [
  { method: "GET", path: /^\/v1\/limits$/, action: "limits.show", handle: limits },
  { method: "GET", path: /^\/v1\/audit$/, action: "audit.read", handle: audit },
];
