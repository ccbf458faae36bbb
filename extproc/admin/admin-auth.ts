/**
 * Who is calling the admin API: an admin key (`authorization: Bearer gbx_admin_…`) from the store,
 * or the bootstrap key (`GEARBOX_ADMIN_KEY`). Keys are read from the store on every admin request,
 * without the hot path's cache, so revoking an admin key takes effect at once. A call key is
 * refused (403). A tenant-scoped admin key is held to its tenant's IP allowlist.
 */
import { GatewayError } from "../../common/errors.ts";
import { presentedKey } from "../governance/auth.ts";
import { invalidApiKey, ipNotAllowed, missingApiKey } from "../governance/auth-errors.ts";
import { addressAllowed } from "../governance/cidr.ts";
import { hashKey, verifyKey } from "../governance/keys.ts";
import type { ApiKeyRecord } from "../governance/model.ts";
import type { AdminDeps } from "./deps.ts";

/**
 * The caller and either its admin key or why it is refused. `actor` is how the audit log names it:
 * `key_… (gbx_admin_Ab)`, `anonymous` or `unknown key`, never the key itself.
 */
export type AdminIdentity = { actor: string; ok: true; record: ApiKeyRecord } | { actor: string; ok: false; error: GatewayError };

function actorLabel(record: ApiKeyRecord): string {
  return `${record.id} (${record.prefix})`;
}

export async function identifyAdmin(
  headers: Record<string, string>,
  from: string,
  deps: AdminDeps,
  bootstrap: ApiKeyRecord | undefined,
): Promise<AdminIdentity> {
  const key = presentedKey(headers);
  if (key === undefined) {
    return { actor: "anonymous", ok: false, error: missingApiKey("admin") };
  }
  if (bootstrap && verifyKey(key, bootstrap)) return { actor: actorLabel(bootstrap), ok: true, record: bootstrap };
  const record = await deps.store.keyByHash(hashKey(key));
  if (!record || record.revoked_at !== undefined || !verifyKey(key, record)) {
    return { actor: record ? actorLabel(record) : "unknown key", ok: false, error: invalidApiKey() };
  }
  const actor = actorLabel(record);
  if (record.role !== "admin") {
    const error = new GatewayError(403, "permission_error", "This key can only make model calls; the admin API needs an admin key.", {
      code: "insufficient_permissions",
    });
    return { actor, ok: false, error };
  }
  if (record.tenant !== undefined) {
    const tenant = (await deps.auth.directory.snapshot(0)).byId.get(record.tenant);
    if (!tenant) return { actor, ok: false, error: invalidApiKey() };
    if (tenant.ip_allowlist && !addressAllowed(tenant.ip_allowlist, from)) {
      return { actor, ok: false, error: ipNotAllowed() };
    }
  }
  return { actor, ok: true, record };
}
