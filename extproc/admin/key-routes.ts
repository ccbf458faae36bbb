/**
 * `/v1/keys`: create (the key is in this one response and nowhere else, ever), list (prefixes
 * only, never hashes), revoke. Revocation is immediate on this replica and seen by the others
 * within the key cache's bound (5 s). The bootstrap key lives in the environment: rotate it there.
 */
import { z } from "zod";
import { tenantSchema } from "../governance/config-schema.ts";
import { GatewayError } from "../../common/errors.ts";
import { generateKey } from "../governance/keys.ts";
import { isPrintable, NOT_PRINTABLE_MESSAGE } from "../../common/schemas/printable.ts";
import type { ApiKeyRecord } from "../governance/model.ts";
import { notFound, parseBody, requireTenantAccess, type Context, type Reply, type Route } from "./route.ts";

const createSchema = z.strictObject({
  role: z.enum(["call", "admin"]),
  tenant: z.string().min(1).optional(),
  /** Shown by `gearbox keys list` and in the audit log: printable text only. */
  name: z.string().min(1).max(100).refine(isPrintable, NOT_PRINTABLE_MESSAGE).optional(),
  limits: tenantSchema.shape.limits.unwrap().optional(),
});

/** A key record as the API shows it: everything but the hash. */
function shown(record: ApiKeyRecord): Omit<ApiKeyRecord, "hash"> {
  const { hash: _hash, ...rest } = record;
  return rest;
}

async function create(ctx: Context): Promise<Reply> {
  const spec = parseBody(createSchema, await ctx.body());
  // A tenant's admin makes keys for its own tenant, whether or not it names it.
  const tenant = spec.tenant ?? ctx.actor.tenant;
  requireTenantAccess(ctx.actor, tenant);
  if (spec.role === "call" && tenant === undefined) {
    throw new GatewayError(400, "invalid_request_error", "A call key needs a tenant.", { code: "invalid_field", param: "tenant" });
  }
  if (tenant !== undefined && !(await ctx.deps.auth.directory.snapshot(0)).byId.has(tenant)) {
    throw new GatewayError(400, "invalid_request_error", `No tenant '${tenant}'.`, { code: "tenant_not_found", param: "tenant" });
  }
  const { key, record } = generateKey(
    {
      role: spec.role,
      ...(tenant !== undefined && { tenant }),
      name: spec.name ?? `${spec.role} key`,
      ...(spec.limits && { limits: spec.limits }),
      createdBy: ctx.actor.id,
    },
    ctx.now,
  );
  await ctx.deps.store.putKey(record);
  return {
    status: 201,
    body: { ...shown(record), key, warning: "This is the only time the key is shown. Store it now: Gearbox keeps only its hash." },
    target: record.id,
    details: { role: record.role, tenant: record.tenant ?? null, prefix: record.prefix },
  };
}

async function list(ctx: Context): Promise<Reply> {
  const asked = ctx.query.get("tenant") ?? undefined;
  const tenant = asked ?? ctx.actor.tenant;
  requireTenantAccess(ctx.actor, tenant);
  const keys = await ctx.deps.store.listKeys(tenant);
  return { status: 200, body: { object: "list", data: keys.map(shown) }, target: tenant ?? "*" };
}

async function revoke(ctx: Context): Promise<Reply> {
  const id = ctx.params[0] ?? "";
  if (id === "key_bootstrap") {
    throw new GatewayError(409, "invalid_request_error", "The bootstrap key is set by GEARBOX_ADMIN_KEY; rotate it there.", { code: "bootstrap_key" });
  }
  const { store, auth } = ctx.deps;
  const record = await store.getKey(id);
  if (!record) throw notFound("key", id, "key_not_found");
  requireTenantAccess(ctx.actor, record.tenant);
  const revoked = await store.revokeKey(id, ctx.now);
  if (!revoked) throw notFound("key", id, "key_not_found");
  auth.keys.forget(record.hash);
  return { status: 200, body: shown(revoked), details: { prefix: record.prefix, tenant: record.tenant ?? null } };
}

export const keyRoutes: Route[] = [
  { method: "POST", path: /^\/v1\/keys$/, action: "keys.create", handle: create },
  { method: "GET", path: /^\/v1\/keys$/, action: "keys.list", handle: list },
  { method: "DELETE", path: /^\/v1\/keys\/([^/]+)$/, action: "keys.revoke", handle: revoke },
];
