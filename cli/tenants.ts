/**
 * `gearbox tenants list | get <id> | put <file.yaml|json> | delete <id>`, over the admin API.
 * A file holds one tenant, a list of them, or a `tenants:` section as in `gearbox.yaml`.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { parse as parseYaml } from "yaml";
import { AdminClient, AdminError, printableJson, printableLine, runVerb, table, UsageError, type CliIo } from "./admin-client.ts";

export const TENANTS_USAGE = `usage: gearbox tenants list [--json]
       gearbox tenants get <id>
       gearbox tenants put <file.yaml|file.json>   one tenant, a list, or a 'tenants:' section
       gearbox tenants delete <id>                 also revokes the tenant's keys
`;

interface TenantView {
  id: string;
  source: string;
  models?: string[];
  limits: Record<string, number>;
  ip_allowlist?: string[];
  principals?: string[];
}

/** The tenants a file describes, each still to be validated by the server. */
function tenantsIn(file: string): Record<string, unknown>[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new UsageError(`${file}: not YAML or JSON (${(err as Error).message})`);
  }
  const section = typeof doc === "object" && doc !== null && !Array.isArray(doc) && "tenants" in doc ? doc.tenants : doc;
  const list = Array.isArray(section) ? (section as unknown[]) : [section];
  return list.map((t, i) => {
    if (typeof t !== "object" || t === null || typeof (t as { id?: unknown }).id !== "string") throw new UsageError(`${file}: tenant ${i + 1} has no 'id'`);
    return t as Record<string, unknown>;
  });
}

export function runTenants(args: string[], io: CliIo): Promise<number> {
  return runVerb("tenants", args, io, TENANTS_USAGE, async () => {
    const { positionals, values } = parseArgs({ args, allowPositionals: true, options: { json: { type: "boolean" } } });
    const [sub, arg, ...extra] = positionals;
    if (extra.length > 0) throw new UsageError(`unexpected '${extra.join(" ")}'`);
    const needArg = (what: string): string => {
      if (arg === undefined) throw new UsageError(`'${sub}' needs ${what}`);
      return arg;
    };
    if (sub === undefined) throw new UsageError("missing subcommand");
    switch (sub) {
      case "list": {
        const { data } = await AdminClient.fromEnv(io.env).request<{ data: TenantView[] }>("GET", "/v1/tenants");
        if (values.json) return io.out(printableJson(data));
        const limits = (t: TenantView) =>
          Object.entries(t.limits)
            .map(([k, v]) => `${k}=${v}`)
            .join(",");
        io.out(
          table(
            ["ID", "SOURCE", "MODELS", "LIMITS", "IP ALLOWLIST", "PRINCIPALS"],
            data.map((t) => [t.id, t.source, t.models?.join(","), limits(t), t.ip_allowlist?.join(","), t.principals?.join(",")]),
          ),
        );
        return;
      }
      case "get": {
        const tenant = await AdminClient.fromEnv(io.env).request<TenantView>("GET", `/v1/tenants/${encodeURIComponent(needArg("a tenant id"))}`);
        return io.out(printableJson(tenant));
      }
      case "put": {
        const tenants = tenantsIn(needArg("a file"));
        const client = AdminClient.fromEnv(io.env);
        for (const tenant of tenants) {
          const id = String(tenant.id);
          try {
            await client.request("PUT", `/v1/tenants/${encodeURIComponent(id)}`, tenant);
          } catch (err) {
            if (err instanceof AdminError) throw new AdminError(`tenant '${id}': ${err.message}`, err.status);
            throw err;
          }
          io.out(printableLine(`tenant ${id} saved`));
        }
        return;
      }
      case "delete": {
        const id = needArg("a tenant id");
        const res = await AdminClient.fromEnv(io.env).request<{ revoked_keys: string[] }>("DELETE", `/v1/tenants/${encodeURIComponent(id)}`);
        io.out(printableLine(`tenant ${id} deleted${res.revoked_keys.length > 0 ? `; revoked keys: ${res.revoked_keys.join(", ")}` : ""}`));
        return;
      }
      default:
        throw new UsageError(`unknown subcommand '${sub}'`);
    }
  });
}
