/**
 * `/v1/tenants`: list, read, create or replace (`PUT`, validated by the config's own
 * `tenantSchema`), delete (which also revokes the tenant's keys). Tenants from the config file are
 * read-only here: changing or deleting one is a 409 that says to edit the file.
 */
import { tenantSchema } from "../governance/config-schema.ts";
import { GatewayError } from "../../common/errors.ts";
import type { Tenant } from "../governance/model.ts";
import { notFound, parseBody, requireTenantAccess, type Context, type Reply, type Route } from "./route.ts";

const ONE = /^\/v1\/tenants\/([^/]+)$/;

function fromConfig(id: string): GatewayError {
  return new GatewayError(
    409,
    "invalid_request_error",
    `Tenant '${id}' is defined in the config file; change it there (config tenants are read-only over the admin API).`,
    {
      code: "tenant_from_config",
    },
  );
}

async function list(ctx: Context): Promise<Reply> {
  const tenants = [...(await ctx.deps.auth.directory.snapshot(0)).byId.values()];
  const visible = ctx.actor.tenant === undefined ? tenants : tenants.filter((t) => t.id === ctx.actor.tenant);
  return { status: 200, body: { object: "list", data: visible }, target: "*" };
}

async function get(ctx: Context): Promise<Reply> {
  const id = ctx.params[0] ?? "";
  requireTenantAccess(ctx.actor, id);
  const tenant = (await ctx.deps.auth.directory.snapshot(0)).byId.get(id);
  if (!tenant) throw notFound("tenant", id, "tenant_not_found");
  return { status: 200, body: tenant };
}

async function put(ctx: Context): Promise<Reply> {
  const id = ctx.params[0] ?? "";
  requireTenantAccess(ctx.actor, id);
  const { directory } = ctx.deps.auth;
  if (directory.configTenant(id)) throw fromConfig(id);
  const raw = await ctx.body();
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new GatewayError(400, "invalid_request_error", "The body must be a JSON object (a tenant).", { code: "invalid_field", param: "body" });
  }
  // `source` is the server's to set; a tenant read with GET can be sent back as it is.
  const { source: _source, ...fields } = raw as Record<string, unknown>;
  if (fields.id !== undefined && fields.id !== id) {
    throw new GatewayError(400, "invalid_request_error", `The body's id ${JSON.stringify(fields.id)} differs from the path's '${id}'.`, {
      code: "invalid_field",
      param: "id",
    });
  }
  const tenant: Tenant = { ...parseBody(tenantSchema, { ...fields, id }), source: "admin" };
  const snapshot = await directory.snapshot(0);
  for (const principal of tenant.principals ?? []) {
    const owner = snapshot.byPrincipal.get(principal);
    if (owner && owner.id !== id) {
      throw new GatewayError(409, "invalid_request_error", `The workload identity '${principal}' is already bound to tenant '${owner.id}'.`, {
        code: "principal_in_use",
        param: "principals",
      });
    }
  }
  const created = !snapshot.byId.has(id);
  await ctx.deps.store.putTenant(tenant);
  directory.invalidate();
  return { status: created ? 201 : 200, body: tenant, details: { created } };
}

async function remove(ctx: Context): Promise<Reply> {
  const id = ctx.params[0] ?? "";
  requireTenantAccess(ctx.actor, id);
  const { store, auth } = ctx.deps;
  if (auth.directory.configTenant(id)) throw fromConfig(id);
  if (!(await store.getTenant(id))) throw notFound("tenant", id, "tenant_not_found");
  // Revoke first: a tenant re-created with this id must not inherit live keys.
  const revoked: string[] = [];
  for (const key of await store.listKeys(id)) {
    if (key.revoked_at !== undefined) continue;
    await store.revokeKey(key.id, ctx.now);
    auth.keys.forget(key.hash);
    revoked.push(key.id);
  }
  await store.deleteTenant(id);
  auth.directory.invalidate();
  return { status: 200, body: { id, deleted: true, revoked_keys: revoked }, details: { revoked_keys: revoked } };
}

export const tenantRoutes: Route[] = [
  { method: "GET", path: /^\/v1\/tenants$/, action: "tenants.list", handle: list },
  { method: "GET", path: ONE, action: "tenants.get", handle: get },
  { method: "PUT", path: ONE, action: "tenants.put", handle: put },
  { method: "DELETE", path: ONE, action: "tenants.delete", handle: remove },
];
