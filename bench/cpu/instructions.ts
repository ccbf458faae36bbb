/**
 * Instructions per request, counted: `gearbox serve` and the bare proxy (and with `--base DIR`, the
 * Gearbox of another checkout) each run under valgrind's callgrind, warmed up, then measured on
 * the same requests with the counters zeroed before and dumped after. Callgrind counts the
 * instructions a process executes in user space (every thread: V8's compilers and collector,
 * libuv's pool), not time, so a figure does not move with the machine's load: one tree counted
 * 496.0–497.7 k instructions per JSON request in five settled repeats of three processes over two
 * runs, while CPU time per request of one tree moved up to 2× between runs on this shared VM
 * (bench/RESULTS.md). Compare targets of one run (`--base`), though: what V8 compiles depends on
 * what it saw first, and the bare proxy settled at 360 k in one run and at 282 k in another.
 * It judges a change to Gearbox's own code below the CPU benches' noise floor; the goals stay
 * judged in CPU time (`cpu.bench.ts`).
 *
 *   node --import tsx bench/cpu/instructions.ts [--requests 2000] [--warm-up 8000] [--clients 1]
 *     [--stream] [--repeat 3] [--base DIR] [--out DIR] [--where 30] [--callers NAME]
 *
 * What it reports: the program's instructions — V8's optimizing compilers and garbage collector
 * apart, in their own columns, as their work comes in lumps (`callgrind.ts`); a repeat counts once
 * the compilers have settled (counting makes V8 optimize again for a few repeats). `--where N`
 * lists Gearbox's N costliest functions, JavaScript named through `--perf-basic-prof`, and the N
 * whose own instructions exceed the bare proxy's most; `--callers` who called a function.
 *
 * What it does not see, or sees bent: the kernel's share (system calls — count them with
 * `variants.ts --strace`), cache misses and stalls; and work on a timer (the request log's flush
 * every 20 ms, the metrics' clock) weighs ~50× more per request than natively, as valgrind runs
 * a process ~50× slower — about 1 % of Gearbox's count. One client by default (requests in
 * sequence, so how reads and writes batch does not depend on the machine's speed); a few minutes
 * per target to start and warm up. The warm-up is JSON requests and streams alike (half as
 * many), uncounted, as in `variants.ts`.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { median, numberArg, runBench, startRoleUnder, stringArg } from "../processes.ts";
import { Client, startGearbox } from "./harness.ts";
import { COLLECTOR, COMPILER, jitNames, readDump, split, type Dump } from "./callgrind.ts";

const REQUESTS = numberArg("requests", 2000);
const WARM_UP = numberArg("warm-up", 8000);
const CLIENTS = numberArg("clients", 1);
const REPEAT = numberArg("repeat", 3);
const STREAM = process.argv.includes("--stream");
/** A repeat is steady once V8's compilers took at most this share of the program's instructions. */
const SETTLED = 0.02;
/** Repeats at most spent waiting for that. */
const MAX_SETTLING = 8;
const BASE = stringArg("base");
/** `--where N`: Gearbox's N costliest functions; `--callers NAME`: who called the functions named so. */
const WHERE = numberArg("where", 0);
const CALLERS = stringArg("callers");
const OUT = stringArg("out") ?? mkdtempSync(path.join(os.tmpdir(), "gearbox-instructions-"));

interface Target {
  name: string;
  pid: number;
  url: string;
  /** Where callgrind writes this target's dumps (`<file>.<n>`, one per `callgrind_control --dump`). */
  file: string;
}

/**
 * valgrind's callgrind writing to `file`, its instrumentation off until the measured requests
 * (`callgrind_control -i on`): the warm-up runs several times faster without it.
 */
const callgrind = (file: string) => ["valgrind", "--tool=callgrind", `--callgrind-out-file=${file}`, "--instr-atstart=no", "--quiet"];

/** `target`'s newest dump file. */
function newestDump(target: Target): string {
  const base = path.basename(target.file);
  const dumps = readdirSync(path.dirname(target.file))
    .filter((f) => f.startsWith(`${base}.`))
    .map((f) => Number(f.slice(base.length + 1)))
    .filter(Number.isFinite);
  return `${target.file}.${Math.max(...dumps)}`;
}

/** `callgrind_control` on a target: `-i on` starts counting, `-z` zeroes the counters, `-d` dumps them. */
const control = (pid: number, ...flags: string[]) => execFileSync("callgrind_control", [...flags, String(pid)], { stdio: "ignore" });

/** One measured repeat of a target, per request: the program's instructions, V8's collector's and compilers', and the dump. */
interface Repeat {
  program: number;
  collector: number;
  compiler: number;
  dump: Dump;
}

const thousands = (x: number) => `${(x / 1000).toFixed(1)} k`;

/** The `n` functions with the most instructions of their own, per request. */
function printWhere(title: string, dump: Dump, n: number): void {
  console.log(`\n${title}: the ${n} functions with the most instructions of their own, per request (JavaScript by --perf-basic-prof's names)\n`);
  console.log("| instructions/request | share | function |");
  console.log("|---:|---:|---|");
  for (const [fn, ir] of [...dump.self].sort((a, b) => b[1] - a[1]).slice(0, n))
    console.log(`| ${thousands(ir / REQUESTS)} | ${((ir / dump.total) * 100).toFixed(2)} % | ${fn.replaceAll("|", "\\|")} |`);
}

/** A function's name without V8's tier mark (`JS:*f`, `JS:~f`, `JS:^f` are one function, optimized or not). */
const untiered = (fn: string) => fn.replace(/^JS:[*~^+]?/, "JS:");

/**
 * The `n` functions whose own instructions per request in `dump` exceed `baseline`'s most
 * (Gearbox against the bare proxy: where Gearbox's extra goes), the program's only.
 */
function printOver(title: string, dump: Dump, baseline: Dump, n: number): void {
  const program = (d: Dump) => {
    const by = new Map<string, number>();
    for (const [fn, ir] of d.self) if (!COMPILER.test(fn) && !COLLECTOR.test(fn)) by.set(untiered(fn), (by.get(untiered(fn)) ?? 0) + ir);
    return by;
  };
  const [mine, theirs] = [program(dump), program(baseline)];
  const over = [...mine].map(([fn, ir]) => [fn, ir - (theirs.get(fn) ?? 0)] as const).sort((a, b) => b[1] - a[1]);
  console.log(`\n${title}: the ${n} functions whose own instructions per request exceed the bare proxy's most\n`);
  console.log("| over the bare proxy's | Gearbox's | function |");
  console.log("|---:|---:|---|");
  for (const [fn, extra] of over.slice(0, n))
    console.log(`| ${thousands(extra / REQUESTS)} | ${thousands((mine.get(fn) ?? 0) / REQUESTS)} | ${fn.replaceAll("|", "\\|")} |`);
}

/** Who called the functions whose name contains `callee`, by the inclusive instructions of those calls. */
function printCallers(title: string, dump: Dump, callee: string, n: number): void {
  const by = new Map<string, number>();
  for (const [caller, out] of dump.calls)
    for (const [fn, ir] of out) if (fn.includes(callee) && !caller.includes(callee)) by.set(caller, (by.get(caller) ?? 0) + ir);
  console.log(`\n${title}: callers of "${callee}", by instructions per request spent in those calls\n`);
  console.log("| instructions/request | caller |");
  console.log("|---:|---|");
  for (const [caller, ir] of [...by].sort((a, b) => b[1] - a[1]).slice(0, n)) console.log(`| ${thousands(ir / REQUESTS)} | ${caller.replaceAll("|", "\\|")} |`);
}

async function main(): Promise<void> {
  try {
    execFileSync("valgrind", ["--version"], { stdio: "ignore" });
  } catch {
    throw new Error("this bench runs each target under valgrind, which is not installed here (Debian: apt-get install valgrind)");
  }
  mkdirSync(OUT, { recursive: true });
  const roles = new URL("../roles.ts", import.meta.url);
  const upstream = await startRoleUnder([], [], roles, "recorded-upstream");
  const origin = `http://127.0.0.1:${upstream.port}`;
  const route = "/v1/chat/completions";
  const targets: Target[] = [];
  // Every target names its JIT code for the dumps; writing the map costs nothing once code is compiled.
  const flags = ["--perf-basic-prof"];
  const gearboxAt = async (name: string, bin: string) => {
    const file = path.join(OUT, name.replace(/\W+/g, "-"));
    const g = await startGearbox(bin, origin, flags, undefined, callgrind(file));
    targets.push({ name, pid: g.pid, url: `http://127.0.0.1:${g.ports.http}${route}`, file });
  };
  await gearboxAt("Gearbox", fileURLToPath(new URL("../../bin/gearbox.mjs", import.meta.url)));
  if (BASE) await gearboxAt("Gearbox base", path.join(BASE, "bin/gearbox.mjs"));
  const proxyFile = path.join(OUT, "bare-proxy");
  const proxy = await startRoleUnder(callgrind(proxyFile), flags, roles, "bare-proxy", origin);
  targets.push({ name: "bare proxy", pid: Number(proxy.pid), url: `http://127.0.0.1:${proxy.port}${route}`, file: proxyFile });

  const client = await Client.start();
  const run = (t: Target, clients: number, requests: number, stream: boolean) =>
    client.run({ kind: "http", url: t.url, concurrency: clients, requests, stream });
  for (const t of targets) {
    await run(t, CLIENTS, WARM_UP, false);
    await run(t, CLIENTS, Math.ceil(WARM_UP / 2), true);
    control(t.pid, "-i", "on");
  }
  const measure = async (t: Target): Promise<Repeat> => {
    control(t.pid, "-z");
    const result = await run(t, CLIENTS, REQUESTS, STREAM);
    control(t.pid, "-d");
    if (result.errors > 0) throw new Error(`${t.name}: ${result.errors} errors, first: ${result.firstError ?? ""}`);
    const dump = readDump(readFileSync(newestDump(t), "utf8"), jitNames(readFileSync(`/tmp/perf-${t.pid}.map`, "utf8")));
    const { program, collector, compiler } = split(dump);
    return { program: program / REQUESTS, collector: collector / REQUESTS, compiler: compiler / REQUESTS, dump };
  };
  // Counted, V8 optimizes again for a while (the code runs ~50× slower under instrumentation);
  // until its compilers' work falls under SETTLED of the program's, a repeat is not steady: its
  // program count ran up to 1.7× a settled one's. A target's repeats follow each other: left idle
  // while the others are counted, a settled process compiled again (its code dropped as unused).
  const per = new Map(targets.map((t) => [t.name, [] as Repeat[]]));
  const settling = new Map(targets.map((t) => [t.name, 0]));
  for (const t of targets) {
    const repeats = per.get(t.name) ?? [];
    for (let tries = 1; repeats.length === 0; tries++) {
      const repeat = await measure(t);
      settling.set(t.name, tries);
      if (repeat.compiler <= SETTLED * repeat.program || tries === MAX_SETTLING) repeats.push(repeat);
    }
    while (repeats.length < REPEAT) repeats.push(await measure(t));
  }
  client.stop();

  const kind = STREAM ? "20-chunk streams" : "JSON requests";
  console.log(
    `# Instructions per request — ${new Date().toISOString()} — ${kind}, ${CLIENTS} client(s), ${REPEAT} × ${REQUESTS} after ${WARM_UP} of warm-up\n`,
  );
  console.log("The program's own instructions (V8's collector and optimizing compilers apart: their work comes in lumps); medians of the repeats.\n");
  console.log(
    "| target | program, per request | each repeat | spread | collector, each repeat | compilers, each repeat | repeats to settle | program against the bare proxy's |",
  );
  console.log("|---|---:|---|---:|---|---|---:|---:|");
  const medianOf = (name: string) => median(per.get(name)?.map((r) => r.program) ?? []);
  const bare = medianOf("bare proxy");
  for (const [name, repeats] of per) {
    const xs = repeats.map((r) => r.program);
    const m = median(xs);
    const spread = ((Math.max(...xs) - Math.min(...xs)) / m) * 100;
    const each = (k: "collector" | "compiler") => repeats.map((r) => thousands(r[k])).join(" · ");
    console.log(
      `| ${name} | ${thousands(m)} | ${xs.map(thousands).join(" · ")} | ${spread.toFixed(2)} % | ${each("collector")} | ${each("compiler")} | ${settling.get(name) ?? 0} | ${(m / bare).toFixed(2)}× (+${thousands(m - bare)}) |`,
    );
  }
  if (BASE) {
    const [now, base] = [medianOf("Gearbox"), medianOf("Gearbox base")];
    console.log(
      `\nGearbox's program against its base's: ${now > base ? "+" : "−"}${(Math.abs(now / base - 1) * 100).toFixed(2)} % (${thousands(now - base)} per request)`,
    );
  }
  const gearbox = per.get("Gearbox") ?? [];
  const typical = [...gearbox].sort((a, b) => a.program - b.program)[Math.floor(gearbox.length / 2)];
  const bareRepeats = per.get("bare proxy") ?? [];
  const bareTypical = [...bareRepeats].sort((a, b) => a.program - b.program)[Math.floor(bareRepeats.length / 2)];
  if (typical && WHERE > 0) printWhere("Gearbox (its median repeat)", typical.dump, WHERE);
  if (typical && bareTypical && WHERE > 0) printOver("Gearbox (its median repeat)", typical.dump, bareTypical.dump, WHERE);
  if (typical && CALLERS) printCallers("Gearbox (its median repeat)", typical.dump, CALLERS, Math.max(WHERE, 15));
  console.log(`\ncallgrind's dumps: ${OUT}`);
}

runBench(main);
