/**
 * The admin API as the CLI sees it: `GEARBOX_ADMIN_URL` (default `http://127.0.0.1:8081`) and
 * `GEARBOX_ADMIN_KEY` (an admin key, sent as a bearer token). A refusal carries the server's own
 * message. Also the CLI verbs' shared plumbing: where output goes, exit codes, tables.
 */
import { escapeUnprintable } from "../common/schemas/printable.ts";

const DEFAULT_ADMIN_URL = "http://127.0.0.1:8081";

/** Exit codes: done, failed (the server refused or could not be reached), wrong usage. */
const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** Where a verb writes and what it reads from the environment (tests capture both). */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
}

export const processIo: CliIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
};

/** A refusal or failure, with the message to show. */
export class AdminError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "AdminError";
  }
}

/** Wrong usage, with the message to show (exit 2). */
export class UsageError extends Error {
  override name = "UsageError";
}

export class AdminClient {
  constructor(
    private readonly baseUrl: string,
    private readonly key: string,
  ) {}

  static fromEnv(env: NodeJS.ProcessEnv): AdminClient {
    const key = env.GEARBOX_ADMIN_KEY;
    if (!key) throw new UsageError("GEARBOX_ADMIN_KEY is not set: the admin API needs an admin key");
    return new AdminClient(env.GEARBOX_ADMIN_URL || DEFAULT_ADMIN_URL, key);
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const url = new URL(path, this.baseUrl);
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: { authorization: `Bearer ${this.key}`, ...(body !== undefined && { "content-type": "application/json" }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
    } catch (err) {
      const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err);
      throw new AdminError(`cannot reach the admin API at ${url.origin} (${cause})`);
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new AdminError(`the admin API answered HTTP ${res.status} with a body that is not JSON`, res.status);
    }
    if (!res.ok) {
      const message = (parsed as { error?: { message?: unknown } }).error?.message;
      throw new AdminError(`${typeof message === "string" ? message : "request refused"} (HTTP ${res.status})`, res.status);
    }
    return parsed as T;
  }
}

/** Runs a verb on its arguments: `--help` prints its usage; errors become a message and an exit code. */
export async function runVerb(verb: string, args: string[], io: CliIo, usage: string, body: () => Promise<void>): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    io.out(usage);
    return EXIT.ok;
  }
  try {
    await body();
    return EXIT.ok;
  } catch (err) {
    if (err instanceof AdminError) {
      io.err(`gearbox ${verb}: ${escapeUnprintable(err.message)}\n`);
      return EXIT.failed;
    }
    if (err instanceof UsageError || (err instanceof TypeError && "code" in err && String(err.code).startsWith("ERR_PARSE_ARGS"))) {
      io.err(`gearbox ${verb}: ${err.message}\n\n${usage}`);
      return EXIT.usage;
    }
    throw err;
  }
}

/** A line of text from the server's values, shown and never obeyed by the terminal (control characters escaped). */
export function printableLine(text: string): string {
  return `${escapeUnprintable(text)}\n`;
}

/**
 * `--json` output: JSON already escapes C0 controls; DEL, C1 controls, line separators and
 * bidirectional overrides are escaped too (`\u009b`), so the JSON is the same data, inert on a terminal.
 */
export function printableJson(value: unknown): string {
  return (
    JSON.stringify(value, null, 2).replace(
      /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
    ) + "\n"
  );
}

/** Rows as aligned columns under a header; absent cells print as `-`. */
export function table(header: string[], rows: (string | undefined)[][]): string {
  // Cells come from the server (names anyone with an admin key chose): shown, never obeyed.
  const cells = [header, ...rows.map((r) => r.map((c) => (c === undefined || c === "" ? "-" : escapeUnprintable(c))))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join("  ")).join("\n") + "\n";
}
