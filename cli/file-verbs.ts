/** Plumbing of the verbs that work on files (`report`, `replay`): usage problems and unreadable files. */
import { stat } from "node:fs/promises";
import { parseArgs, type ParseArgsConfig } from "node:util";
import type { CliIo } from "./admin-client.ts";

/** Wrong usage, with the message to show (exit 2, with the usage). */
export class UsageProblem extends Error {}

/** A verb's flags and positionals (`node:util` parseArgs); an unknown or malformed flag is a `UsageProblem`. */
export function parseVerbArgs<O extends NonNullable<ParseArgsConfig["options"]>>(args: string[], options: O) {
  try {
    return parseArgs({ args, allowPositionals: true, options });
  } catch (err) {
    throw new UsageProblem(err instanceof Error ? err.message : String(err));
  }
}

/**
 * `--help` → the usage (exit 0); a `UsageProblem` from `parse` → its message and the usage
 * (exit 2); else the parsed options.
 */
export function parseOrExit<T>(verb: string, args: string[], usage: string, io: CliIo, parse: (args: string[]) => T): { options: T } | { exit: number } {
  if (args.includes("--help") || args.includes("-h")) {
    io.out(usage);
    return { exit: 0 };
  }
  try {
    return { options: parse(args) };
  } catch (err) {
    if (!(err instanceof UsageProblem)) throw err;
    io.err(`gearbox ${verb}: ${err.message}\n\n${usage}`);
    return { exit: 2 };
  }
}

/** Why `file` cannot be read as an input, or undefined when it can. */
export function fileProblem(file: string): Promise<string | undefined> {
  return stat(file).then(
    (s) => (s.isFile() ? undefined : `${file} is not a file`),
    (err: NodeJS.ErrnoException) => (err.code === "ENOENT" ? `${file} does not exist` : `${file} cannot be read (${err.code ?? err.message})`),
  );
}
