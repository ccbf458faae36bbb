/**
 * Gearbox under different Node flags, beside the bare proxy, loaded in turn: CPU per request (user
 * and system apart), and on request the system calls and a whole-process profile of each. What
 * the thirteenth pass of issue 25 measured with (bench/RESULTS.md); `cpu.bench.ts` is the goals'
 * bench, this one asks "is this flag, or this process, different?".
 *
 *   node --import tsx bench/cpu/variants.ts [--variants '[[], ["--single-threaded-gc"]]']
 *     [--clients 1] [--rounds 7] [--requests 3000] [--stream] [--turns 2]
 *     [--strace DIR] [--perf DIR] [--stdout DIR]
 *
 * Each variant is one `gearbox serve` on embedded defaults started with those Node flags (`[]`:
 * as shipped); the bare proxy and the recorded upstream are `cpu.bench.ts`'s. Every target gets
 * 5,000 JSON requests and 2,500 streams of warm-up at 8 clients and one untimed round at
 * `--clients`; then the rounds, targets in turn (the first target moves by one each round), CPU
 * from /proc/<pid>/stat; medians. After the rounds, one more measured round per target:
 *
 * - `--strace DIR`: under `strace -f -c` (DIR/<target>.strace); system calls per request printed.
 * - `--perf DIR`: under `perf record -e cpu-clock -F 10000 -g` (DIR/<target>.perf.data; read with
 *   `perf script -i …`). Every process then runs with `--perf-basic-prof`, so that JavaScript
 *   frames have names.
 * - `--stdout DIR`: each Gearbox's stdout kept (DIR/<target>.log): the request log, and V8's
 *   traces when a variant has `--trace-gc`, `--trace-opt` or `--trace-deopt`.
 */
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { median, numberArg, runBench, startRoleWith, stringArg } from "../processes.ts";
import { Client, cpuTimes, startGearbox } from "./harness.ts";

const VARIANTS = JSON.parse(stringArg("variants") ?? "[[]]") as string[][];
const CLIENTS = numberArg("clients", 1);
const ROUNDS = numberArg("rounds", 7);
const REQUESTS = numberArg("requests", 3000);
const STREAM = process.argv.includes("--stream");
/** Messages per request (`cpu.bench.ts --turns`). */
const TURNS = numberArg("turns", 2);
const [STRACE, PERF, STDOUT] = [stringArg("strace"), stringArg("perf"), stringArg("stdout")];
const PROFILE_FLAGS = PERF ? ["--perf-basic-prof"] : [];

interface Target {
  name: string;
  pid: number;
  url: string;
}

/** A file name for a target: `2 --single-threaded-gc` → `2-single-threaded-gc`. */
const fileName = (target: string) => target.replace(/[^a-zA-Z0-9=.]+/g, "-").replace(/^-|-$/g, "");

/** Runs `command` on `pid` (its `-p` argument last) around `measured`, then stops it with SIGINT as one stops them by hand. */
async function around<T>(command: string, args: string[], pid: number, measured: () => Promise<T>): Promise<T> {
  const tool = spawn(command, [...args, "-p", String(pid)], { stdio: "ignore" });
  await new Promise((r) => setTimeout(r, 1000)); // attached
  const result = await measured();
  tool.kill("SIGINT");
  await new Promise((r) => tool.once("exit", r));
  return result;
}

/** `strace -c`'s table: calls per request by system call, most first. */
function syscallsPerRequest(file: string, requests: number): string {
  const rows = readFileSync(file, "utf8")
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f.length >= 5 && /^\d+$/.test(f[3] ?? "") && f[f.length - 1] !== "total")
    .map((f) => [f[f.length - 1] ?? "", Number(f[3]) / requests] as const)
    .sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((s, [, n]) => s + n, 0);
  return `${total.toFixed(2)} per request: ${rows.map(([call, n]) => `${call} ${n.toFixed(2)}`).join(", ")}`;
}

async function main(): Promise<void> {
  const roles = new URL("../roles.ts", import.meta.url);
  const upstream = await startRoleWith([], roles, "recorded-upstream");
  const origin = `http://127.0.0.1:${upstream.port}`;
  const bin = fileURLToPath(new URL("../../bin/gearbox.mjs", import.meta.url));
  const route = "/v1/chat/completions";
  for (const dir of [STRACE, PERF, STDOUT]) if (dir) mkdirSync(dir, { recursive: true });

  const targets: Target[] = [];
  for (const [i, flags] of VARIANTS.entries()) {
    const name = `${i + 1} ${flags.join(" ") || "(as shipped)"}`;
    const gearbox = await startGearbox(bin, origin, [...PROFILE_FLAGS, ...flags], STDOUT && path.join(STDOUT, `${fileName(name)}.log`));
    targets.push({ name, pid: gearbox.pid, url: `http://127.0.0.1:${gearbox.ports.http}${route}` });
  }
  const proxy = await startRoleWith(PROFILE_FLAGS, roles, "bare-proxy", origin);
  targets.push({ name: "bare proxy", pid: Number(proxy.pid), url: `http://127.0.0.1:${proxy.port}${route}` });

  const client = await Client.start();
  const run = (t: Target, clients: number, requests: number, stream: boolean) =>
    client.run({ kind: "http", url: t.url, concurrency: clients, requests, stream, turns: TURNS });
  for (const t of targets) {
    await run(t, 8, 5000, false);
    await run(t, 8, 2500, true);
    await run(t, CLIENTS, REQUESTS, STREAM);
  }

  const per = new Map(targets.map((t) => [t.name, { total: [] as number[], user: [] as number[], system: [] as number[] }]));
  for (let round = 0; round < ROUNDS; round++)
    for (let i = 0; i < targets.length; i++) {
      const t = targets[(i + round) % targets.length] as Target;
      const before = cpuTimes(t.pid);
      const r = await run(t, CLIENTS, REQUESTS, STREAM);
      const after = cpuTimes(t.pid);
      if (r.errors > 0) console.error(`  ${t.name}: ${r.errors} errors, first: ${r.firstError ?? ""}`);
      const m = per.get(t.name);
      m?.user.push((after.user - before.user) / REQUESTS);
      m?.system.push((after.system - before.system) / REQUESTS);
      m?.total.push((after.user + after.system - before.user - before.system) / REQUESTS);
    }

  console.log(
    `# Gearbox variants — ${new Date().toISOString()} — ${STREAM ? "20-chunk streams" : "JSON"}, ${CLIENTS} client(s), ${ROUNDS} rounds × ${REQUESTS} requests, medians\n`,
  );
  console.log("| target | CPU ms/request | user | system | against variant 1 | rounds |");
  console.log("|---|---:|---:|---:|---:|---|");
  const first = median(per.get(targets[0]?.name ?? "")?.total ?? []);
  for (const [name, m] of per) {
    const total = median(m.total);
    const change = ((total / first - 1) * 100).toFixed(1);
    console.log(
      `| ${name} | ${total.toFixed(3)} | ${median(m.user).toFixed(3)} | ${median(m.system).toFixed(3)} | ${change} % | ${m.total.map((x) => x.toFixed(3)).join(" ")} |`,
    );
  }

  for (const t of targets) {
    const file = fileName(t.name);
    if (STRACE) {
      const out = path.join(STRACE, `${file}.strace`);
      await around("strace", ["-f", "-c", "-o", out], t.pid, () => run(t, CLIENTS, REQUESTS, STREAM));
      console.log(`\n${t.name}, system calls (strace -f -c, ${REQUESTS} requests): ${syscallsPerRequest(out, REQUESTS)}`);
    }
    if (PERF) {
      const out = path.join(PERF, `${file}.perf.data`);
      await around("perf", ["record", "-e", "cpu-clock", "-F", "10000", "-g", "-o", out], t.pid, () => run(t, CLIENTS, REQUESTS, STREAM));
      console.log(`\n${t.name}: perf record of ${REQUESTS} requests in ${out} (perf script -i ${out} -F comm,tid,ip,sym,dso)`);
    }
  }
  client.stop();
}

runBench(main);
