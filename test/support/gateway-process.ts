/**
 * Gearbox as the fault suite and bench run it: the real `gearbox extproc` (or `gearbox xds`) executable in
 * a child process, with a config file, `REDIS_URL` and a bootstrap admin key, on ports chosen up
 * front so a restart comes back on the same ones. Its request log (stdout, JSON lines) is kept,
 * and its memory is read from its own `/metrics`, as an operator would.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { freePort, freePorts as distinctPorts } from "../../common/net/free-port.ts";
import { parseConfigText, resolveConfig } from "../../extproc/config/load.ts";

const GEARBOX = fileURLToPath(new URL("../../bin/gearbox.mjs", import.meta.url));
const COLLECT_ON_SIGNAL = fileURLToPath(new URL("./collect-on-signal.mjs", import.meta.url));

export interface Ports {
  extproc: number;
  http: number;
  admin: number;
  metrics: number;
  xds: number;
}

export interface Memory {
  rssMb: number;
  heapMb: number;
}

export interface GatewayProcess {
  readonly ports: Ports;
  /** `http://127.0.0.1:<http port>` */
  readonly url: string;
  readonly extProcAddress: string;
  /** Every JSON line the process wrote (request log included), parsed, across restarts. */
  readonly logs: Record<string, unknown>[];
  /** RSS and V8 heap in use, from its `/metrics`; `collected` (a process started with `collectOnSignal`): after a full collection. */
  memory(options?: { collected?: boolean }): Promise<Memory>;
  /** Sends `signal` and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Sends `signal` and goes on (a preload's trigger). */
  signal(signal: NodeJS.Signals): void;
  /** Starts it again on the same ports and waits until it serves. */
  start(): Promise<void>;
  /** The process's exit code once it has exited on its own (`undefined` while it runs). */
  readonly exitCode: number | null | undefined;
}

export { freePort };

export async function freePorts(): Promise<Ports> {
  const [extproc, http, admin, metrics, xds] = (await distinctPorts(5)) as [number, number, number, number, number];
  return { extproc, http, admin, metrics, xds };
}

/** The `listen:` section for `ports`. */
export function listenYaml(ports: Ports): string {
  return `listen: { host: 127.0.0.1, extproc_port: ${ports.extproc}, http_port: ${ports.http}, admin_port: ${ports.admin}, metrics_port: ${ports.metrics}, xds_port: ${ports.xds} }\n`;
}

/** Whether Gearbox accepts `yaml` (with `env`): the errors when it does not, checked in-process before a start. */
export function configErrors(yaml: string, env: NodeJS.ProcessEnv): string[] {
  const raw = parseConfigText(yaml, "faults.yaml");
  if (!raw.ok) return raw.errors;
  const resolved = resolveConfig(raw.value, env, "faults.yaml");
  return resolved.ok ? [] : resolved.errors;
}

/** A sample of a Prometheus text exposition by metric name (no labels). */
function metric(text: string, name: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(" ")[1]) : NaN;
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Writes `yaml` to `dir/<name>.yaml` and starts `gearbox <mode>` on it; resolves once it serves. */
export async function startGatewayProcess(options: {
  dir: string;
  name: string;
  mode: "extproc" | "xds";
  ports: Ports;
  yaml: string;
  env: Record<string, string>;
  /** Started with `--expose-gc` and a SIGUSR2 handler that runs a full collection (`memory({ collected: true })`). */
  collectOnSignal?: boolean;
  /** Node options before the executable (a test's `--import` preload). */
  nodeArgs?: string[];
}): Promise<GatewayProcess> {
  const file = path.join(options.dir, `${options.name}.yaml`);
  writeFileSync(file, options.yaml);
  const logs: Record<string, unknown>[] = [];
  const url = `http://127.0.0.1:${options.ports.http}`;
  const metricsUrl = `http://127.0.0.1:${options.ports.metrics}/metrics`;
  let child: ChildProcess | undefined;

  const start = async (): Promise<void> => {
    const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", GEARBOX_CONFIG: file, ...options.env };
    const args = [...(options.nodeArgs ?? []), ...(options.collectOnSignal ? ["--expose-gc", "--import", COLLECT_ON_SIGNAL] : []), GEARBOX, options.mode];
    const spawned = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "inherit"] });
    child = spawned;
    createInterface({ input: spawned.stdout }).on("line", (line) => {
      if (!line.startsWith("{")) return;
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // a partial line at exit
      }
    });
    const exited = once(spawned, "exit").then(([code]) => {
      throw new Error(`gearbox ${options.mode} (${options.name}) exited with ${String(code)} before serving`);
    });
    const ready = options.mode === "xds" ? () => fetch(metricsUrl).then((r) => r.ok) : () => fetch(`${url}/healthz`).then((r) => r.ok);
    await Promise.race([waitUntil(ready, 30_000, `gearbox ${options.mode} (${options.name})`), exited]);
    exited.catch(() => undefined);
  };

  await start();
  return {
    ports: options.ports,
    url,
    extProcAddress: `127.0.0.1:${options.ports.extproc}`,
    logs,
    async memory({ collected = false } = {}) {
      if (collected) {
        if (!options.collectOnSignal) throw new Error("memory({ collected }) needs a process started with collectOnSignal");
        child?.kill("SIGUSR2");
        await sleep(500); // the handler runs on the event loop; a full collection of ~100 MB takes tens of ms
      }
      const text = await (await fetch(metricsUrl)).text();
      return { rssMb: metric(text, "gearbox_process_resident_memory_bytes") / 2 ** 20, heapMb: metric(text, "gearbox_nodejs_heap_size_used_bytes") / 2 ** 20 };
    },
    signal(signal) {
      child?.kill(signal);
    },
    async stop(signal = "SIGTERM") {
      const running = child;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const exited = once(running, "exit");
      running.kill(signal);
      await exited;
    },
    start,
    get exitCode() {
      return child && (child.exitCode !== null || child.signalCode !== null) ? child.exitCode : undefined;
    },
  };
}
