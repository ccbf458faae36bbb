/**
 * The `gearbox` command line. Each verb loads its code only when run, so `--help` and
 * `--version` start fast and need nothing but this folder. Failures end in one line on stderr
 * naming the setting to change, and exit 1; wrong usage exits 2.
 */
import { processIo } from "./admin-client.ts";
import { startProblem } from "./ports.ts";
import type { ServeMode } from "./serve.ts";
import { PLANNED, SERVER_USAGE, USAGE, version } from "./usage.ts";

const isHelp = (arg: string | undefined): boolean => arg === "--help" || arg === "-h";

async function main(argv: string[]): Promise<number> {
  const [command = "help", ...args] = argv;
  switch (command) {
    case "serve":
    case "extproc":
    case "xds":
      if (args.some(isHelp)) return help(command);
      if (args.length > 0)
        return usageError(
          command,
          `unexpected argument '${args[0]}' (ports and the rest are set in the config file or the environment)`,
          SERVER_USAGE[command],
        );
      return runServer(command);
    case "edge-agent":
      return runEdge(args);
    case "tenants":
      return (await import("./tenants.ts")).runTenants(args, processIo);
    case "keys":
      return (await import("./keys.ts")).runKeys(args, processIo);
    case "limits":
      return (await import("./limits.ts")).runLimits(args, processIo);
    case "demo":
      return (await import("../demo/main.ts")).runDemoCommand(args);
    case "report":
      return (await import("./report/main.ts")).runReport(args, processIo);
    case "replay":
      return (await import("./replay/main.ts")).runReplay(args, processIo);
    case "ca":
      return (await import("./ca/main.ts")).runCa(args, processIo);
    case "calibrate":
      return (await import("./calibrate.ts")).runCalibrate(args, processIo);
    case "help":
    case "--help":
    case "-h":
      return help(args[0]);
    case "version":
    case "--version":
    case "-v":
      process.stdout.write(`gearbox ${version()}\n`);
      return 0;
    default:
      if (PLANNED.has(command)) return planned(command);
      return usageError(undefined, `unknown command '${command}'`, USAGE);
  }
}

/** `gearbox help [verb]`: the verb's usage on stdout, exit 0. */
async function help(verb: string | undefined): Promise<number> {
  switch (verb) {
    case undefined:
    case "help":
      process.stdout.write(USAGE);
      return 0;
    case "serve":
    case "extproc":
    case "xds":
      process.stdout.write(SERVER_USAGE[verb]);
      return 0;
    case "edge-agent":
      process.stdout.write((await import("../edge-agent/main.ts")).EDGE_AGENT_USAGE);
      return 0;
    case "tenants":
      process.stdout.write((await import("./tenants.ts")).TENANTS_USAGE);
      return 0;
    case "keys":
      process.stdout.write((await import("./keys.ts")).KEYS_USAGE);
      return 0;
    case "limits":
      process.stdout.write((await import("./limits.ts")).LIMITS_USAGE);
      return 0;
    case "demo":
      process.stdout.write((await import("../demo/main.ts")).DEMO_USAGE);
      return 0;
    case "report":
      process.stdout.write((await import("./report/main.ts")).REPORT_USAGE);
      return 0;
    case "replay":
      process.stdout.write((await import("./replay/usage.ts")).REPLAY_USAGE);
      return 0;
    case "ca":
      process.stdout.write((await import("./ca/usage.ts")).CA_USAGE);
      return 0;
    case "calibrate":
      process.stdout.write((await import("./calibrate.ts")).CALIBRATE_USAGE);
      return 0;
    default:
      if (PLANNED.has(verb)) return planned(verb);
      return usageError(undefined, `no help for unknown command '${verb}'`, USAGE);
  }
}

function planned(verb: string): number {
  process.stderr.write(`gearbox: '${verb}' is not available in this version yet\n`);
  return 2;
}

function usageError(verb: string | undefined, message: string, usage: string): number {
  process.stderr.write(`gearbox${verb ? ` ${verb}` : ""}: ${message}\n\n${usage}`);
  return 2;
}

async function runEdge(args: string[]): Promise<number> {
  const { EDGE_AGENT_USAGE, runEdgeAgent } = await import("../edge-agent/main.ts");
  if (args.some(isHelp)) {
    process.stdout.write(EDGE_AGENT_USAGE);
    return 0;
  }
  let agent;
  try {
    agent = await runEdgeAgent(args);
  } catch (err) {
    const listen = startProblem(err);
    process.stderr.write(
      listen
        ? `gearbox edge-agent: ${listen} (--port / GEARBOX_EDGE_PORT)\n`
        : `gearbox edge-agent: ${err instanceof Error ? err.message : String(err)}\n\n${EDGE_AGENT_USAGE}`,
    );
    return 1;
  }
  const stop = (signal: string) => {
    console.log(`gearbox edge-agent: ${signal} received, stopping`);
    agent.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error("gearbox edge-agent: stop failed", err);
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
  return new Promise<number>(() => undefined);
}

async function runServer(mode: ServeMode): Promise<number> {
  const { ConfigError, serve } = await import("./serve.ts");
  // Signals are taken from the start: one that arrives while the servers start (the banner is
  // already out) drains them once they are up, instead of killing the process mid-start.
  let running: Awaited<ReturnType<typeof serve>> | undefined;
  let received: string | undefined;
  const stop = (signal: string) => {
    received ??= signal;
    if (!running) return;
    console.log(`gearbox: ${signal} received, draining`);
    running.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error("gearbox: drain failed", err);
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
  try {
    running = await serve(mode);
  } catch (err) {
    // Configuration and listen problems are the operator's to fix: their message, no stack.
    const problems = err instanceof ConfigError ? err.problems : [startProblem(err)].filter((p) => p !== undefined);
    if (problems.length === 0) throw err;
    const lines = problems.length === 1 ? ` ${problems[0]}` : `\n  ${problems.join("\n  ")}`;
    process.stderr.write(`gearbox ${mode}:${lines}\n`);
    return 1;
  }
  if (received !== undefined) stop(received);
  return new Promise<number>(() => undefined);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exit(code);
  },
  (err: unknown) => {
    console.error("gearbox: fatal:", err);
    process.exit(1);
  },
);
