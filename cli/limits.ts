/** `gearbox limits show`: who is being throttled right now, and by which limit. */
import { parseArgs } from "node:util";
import type { ThrottledCaller } from "../extproc/admin/deps.ts";
import { AdminClient, printableJson, runVerb, table, UsageError, type CliIo } from "./admin-client.ts";

export const LIMITS_USAGE = `usage: gearbox limits show [--json]
`;

export function runLimits(args: string[], io: CliIo): Promise<number> {
  return runVerb("limits", args, io, LIMITS_USAGE, async () => {
    const { positionals, values } = parseArgs({ args, allowPositionals: true, options: { json: { type: "boolean" } } });
    if (positionals.length !== 1 || positionals[0] !== "show")
      throw new UsageError(positionals.length === 0 ? "missing subcommand" : `unknown subcommand '${positionals.join(" ")}'`);
    const { data } = await AdminClient.fromEnv(io.env).request<{ data: ThrottledCaller[] }>("GET", "/v1/limits");
    if (values.json) return io.out(printableJson(data));
    if (data.length === 0) return io.out("no one is being throttled\n");
    io.out(
      table(
        ["TENANT", "KEY", "LIMIT", "UNTIL", "DETAIL"],
        data.map((t) => [t.tenant, t.key, t.limit, t.until, t.detail]),
      ),
    );
  });
}
