/**
 * `gearbox keys create | list | revoke`, over the admin API. `create` prints the key alone on
 * stdout (so `KEY=$(gearbox keys create …)` captures it), and on stderr what it is and that it
 * will never be shown again.
 */
import { parseArgs } from "node:util";
import { AdminClient, printableJson, printableLine, runVerb, table, UsageError, type CliIo } from "./admin-client.ts";

export const KEYS_USAGE = `usage: gearbox keys create --role call|admin [--tenant <id>] [--name <name>]
       gearbox keys list [--tenant <id>] [--json]
       gearbox keys revoke <key id>
`;

interface KeyView {
  id: string;
  role: string;
  tenant?: string;
  name: string;
  prefix: string;
  created_at: string;
  revoked_at?: string;
}

export function runKeys(args: string[], io: CliIo): Promise<number> {
  return runVerb("keys", args, io, KEYS_USAGE, async () => {
    const { positionals, values } = parseArgs({
      args,
      allowPositionals: true,
      options: { role: { type: "string" }, tenant: { type: "string" }, name: { type: "string" }, json: { type: "boolean" } },
    });
    const [sub, arg, ...extra] = positionals;
    if (extra.length > 0 || (sub !== "revoke" && arg !== undefined)) throw new UsageError(`unexpected '${[arg, ...extra].join(" ")}'`);
    if (sub === undefined) throw new UsageError("missing subcommand");
    switch (sub) {
      case "create": {
        if (values.role !== "call" && values.role !== "admin") throw new UsageError("--role must be 'call' or 'admin'");
        const spec = {
          role: values.role,
          ...(values.tenant !== undefined && { tenant: values.tenant }),
          ...(values.name !== undefined && { name: values.name }),
        };
        const made = await AdminClient.fromEnv(io.env).request<KeyView & { key: string }>("POST", "/v1/keys", spec);
        io.out(`${made.key}\n`);
        io.err(printableLine(`created ${made.role} key ${made.id} (${made.prefix})${made.tenant ? ` for tenant ${made.tenant}` : ""}`));
        io.err("warning: this key will not be shown again; store it now (Gearbox keeps only its hash)\n");
        return;
      }
      case "list": {
        const query = values.tenant !== undefined ? `?tenant=${encodeURIComponent(values.tenant)}` : "";
        const { data } = await AdminClient.fromEnv(io.env).request<{ data: KeyView[] }>("GET", `/v1/keys${query}`);
        if (values.json) return io.out(printableJson(data));
        io.out(
          table(
            ["ID", "PREFIX", "ROLE", "TENANT", "NAME", "CREATED", "REVOKED"],
            data.map((k) => [k.id, k.prefix, k.role, k.tenant, k.name, k.created_at, k.revoked_at]),
          ),
        );
        return;
      }
      case "revoke": {
        if (arg === undefined) throw new UsageError("'revoke' needs a key id");
        const revoked = await AdminClient.fromEnv(io.env).request<KeyView>("DELETE", `/v1/keys/${encodeURIComponent(arg)}`);
        io.out(printableLine(`revoked ${revoked.id} (${revoked.prefix}) at ${revoked.revoked_at ?? "?"}`));
        return;
      }
      default:
        throw new UsageError(`unknown subcommand '${sub}'`);
    }
  });
}
