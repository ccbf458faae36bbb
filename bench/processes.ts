/**
 * What the multi-process benches share: servers started as child processes (each on its own
 * event loop) that report `{ ready: { …ports } }` over IPC, the run wrapper that stops them
 * however the run ends, numeric `--flag value` arguments and the median of rounds.
 */
import { fork, spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const children: ChildProcess[] = [];

/** Forks `script` (run by tsx) with `[name, ...args]`; resolves with what it reports as ready. */
export function startRole(script: URL, name: string, ...args: string[]): Promise<Record<string, number | string>> {
  return startRoleWith([], script, name, ...args);
}

/** `startRole` with Node flags for the role's process (e.g. `--perf-basic-prof`). */
export function startRoleWith(nodeFlags: readonly string[], script: URL, name: string, ...args: string[]): Promise<Record<string, number | string>> {
  return startRoleUnder([], nodeFlags, script, name, ...args);
}

/** `startRoleWith` `under` a command that runs Node (`["valgrind", "--tool=callgrind"]`: the role is `valgrind … node …`). */
export function startRoleUnder(
  under: readonly string[],
  nodeFlags: readonly string[],
  script: URL,
  name: string,
  ...args: string[]
): Promise<Record<string, number | string>> {
  const [command, ...commandArgs] = under;
  const child = fork(fileURLToPath(script), [name, ...args], {
    ...(command && { execPath: command }),
    execArgv: [...(command ? [...commandArgs, process.execPath] : []), ...nodeFlags, "--import", "tsx"],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.once("message", (m: { ready: Record<string, number | string> }) => resolve({ ...m.ready, pid: child.pid ?? 0 }));
    child.once("exit", (code) => reject(new Error(`role ${name} exited with ${code ?? "?"}`)));
  });
}

/**
 * Spawns a command (stdout to /dev/null unless `inherit`, or to the open file `stdout`; stderr too
 * with `quiet`), stopped with the other roles at the end.
 */
export function startProcess(
  command: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; inherit?: boolean; quiet?: boolean; stdout?: number } = {},
): ChildProcess {
  const child = spawn(command, args, {
    env: options.env ?? process.env,
    cwd: options.cwd,
    stdio: ["ignore", options.stdout ?? (options.inherit ? "inherit" : "ignore"), options.quiet ? "ignore" : "inherit"],
  });
  children.push(child);
  return child;
}

/** Runs a bench's `main`; an error sets the exit code; every started role is stopped at the end. */
export function runBench(main: () => Promise<void>): void {
  main()
    .catch((err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    })
    .finally(() => {
      for (const child of children) child.kill();
    });
}

/** `--name <value>` from the command line, else `undefined`. */
export function stringArg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

/** `--name <number>` from the command line, else `fallback`. */
export function numberArg(name: string, fallback: number): number {
  const value = stringArg(name);
  return value !== undefined ? Number(value) : fallback;
}

export const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
