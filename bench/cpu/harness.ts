/**
 * What the CPU benches share (`cpu.bench.ts`, `cpu/variants.ts`): a process's CPU time from
 * /proc, the load-generator process (`client.ts`) driven over IPC, and `gearbox serve` started as
 * shipped — the CLI on embedded defaults in an empty directory.
 */
import { readFileSync, mkdtempSync, openSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startProcess } from "../processes.ts";
import { freePorts } from "../../common/net/free-port.ts";
import type { Result, Run } from "./client.ts";

const TICKS = 100; // getconf CLK_TCK on Linux

/** A process's user and system time so far, ms (every thread). */
export function cpuTimes(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { user: (Number(fields[11]) * 1000) / TICKS, system: (Number(fields[12]) * 1000) / TICKS }; // utime, stime (fields 14, 15)
}

/** A process's user + system time so far, ms. */
export function cpuMs(pid: number): number {
  const { user, system } = cpuTimes(pid);
  return user + system;
}

/** Waits for `ok`, asking every 100 ms, at most `seconds`. */
export async function until(ok: () => Promise<boolean>, what: string, seconds = 30): Promise<void> {
  for (let i = 0; i < seconds * 10; i++) {
    if (await ok().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not come up`);
}

/** The load generator (`client.ts`) in a process of its own. */
export class Client {
  private constructor(private readonly child: ChildProcess) {}
  static async start(): Promise<Client> {
    const child = fork(fileURLToPath(new URL("./client.ts", import.meta.url)), [], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    await new Promise((resolve) => child.once("message", resolve));
    return new Client(child);
  }
  run(run: Run): Promise<Result> {
    return new Promise((resolve) => {
      this.child.once("message", (m: { done: Result }) => resolve(m.done));
      this.child.send(run);
    });
  }
  stop(): void {
    this.child.kill();
  }
}

export interface GearboxProcess {
  pid: number;
  ports: Record<"http" | "extProc" | "xds" | "metrics", number>;
}

/**
 * `gearbox serve` from `bin` on embedded defaults, in an empty directory, with the OpenAI provider
 * at `upstream`. `nodeFlags` go before `bin`; `stdout` (a file, appended to) keeps what the
 * process prints — the request log, and V8's traces under `--trace-*` flags — else it is dropped.
 * `under`: a command that runs Node (`["valgrind", "--tool=callgrind"]`), given minutes to start.
 */
export async function startGearbox(
  bin: string,
  upstream: string,
  nodeFlags: readonly string[] = [],
  stdout?: string,
  under: readonly string[] = [],
): Promise<GearboxProcess> {
  const [http, extProc, xds, metrics] = (await freePorts(4)) as [number, number, number, number];
  const ports = { http, extProc, xds, metrics };
  const [command = process.execPath, ...commandArgs] = [...under, process.execPath];
  const gearbox = startProcess(command, [...commandArgs, ...nodeFlags, bin, "serve"], {
    cwd: mkdtempSync(path.join(os.tmpdir(), "gearbox-cpu-")), // no gearbox.yaml here: embedded defaults
    env: {
      ...process.env,
      OPENAI_BASE_URL: `${upstream}/v1`,
      OPENAI_API_KEY: "sk-bench",
      GEARBOX_HTTP_PORT: String(ports.http),
      GEARBOX_EXTPROC_PORT: String(ports.extProc),
      GEARBOX_XDS_PORT: String(ports.xds),
      GEARBOX_METRICS_PORT: String(ports.metrics),
      GEARBOX_CONFIG: "",
      REDIS_URL: "",
    },
    ...(stdout && { stdout: openSync(stdout, "a") }),
  });
  await until(async () => (await fetch(`http://127.0.0.1:${ports.http}/healthz`)).ok, "gearbox serve", under.length > 0 ? 600 : 30);
  return { pid: gearbox.pid ?? 0, ports };
}
