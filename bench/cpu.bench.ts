/**
 * CPU per request on both transports, beside baselines, in one run (issue 25):
 *
 *   front door  client → X → recorded OpenAI upstream, X ∈ { bare proxy, Gearbox front door, Portkey (optional) }
 *   ext_proc    one gRPC client running Envoy's full ext_proc cycle against { no-op ext_proc, Gearbox ext_proc }
 *
 * Gearbox is `gearbox serve` as shipped — the CLI on embedded defaults (no config file; the OpenAI
 * provider from OPENAI_BASE_URL/OPENAI_API_KEY), request log on stdout (to /dev/null), metrics,
 * memory limiter, runaway check all on. CPU is each server process's user + system time from
 * /proc/<pid>/stat (every thread) over the measured requests; the load generator runs in a process
 * of its own. Within each scenario the targets alternate for `--rounds` rounds; medians are kept.
 *
 *   npm run bench:cpu [-- --rounds 3 --requests 3000 --portkey /tmp/portkey --runs 1]
 *
 * Each run ends with its verdict on issue 25's goals (`cpu/goals.ts`), every figure beside the
 * same run's baseline; `--runs N` repeats the scenarios N times and ends with a table of every
 * run's verdicts — on this shared machine a goal near its threshold is met in some runs and not
 * in others, and one run says little.
 *
 * `--warm-up N` (default 5,000): JSON requests to each target before any is measured, then N/2
 * streamed ones (`WARM_UP` below says why so many); and before each scenario, one untimed round
 * per target at the scenario's concurrency.
 *
 * `--portkey DIR`: a directory where `npm install @portkey-ai/gateway@1.15.2` was run; Portkey's
 * gateway is started from it (`--headless`) and driven with its `x-portkey-provider`/
 * `x-portkey-custom-host` headers at the same upstream.
 *
 * `--turns N` (default 2): messages per request — N − 2 history turns of ~460 characters between
 * the system prompt and the question (40: a ~20 KB conversation), for the work that grows with
 * the body. The goals are judged on the default.
 *
 * `--base DIR`: another Gearbox checkout (e.g. `git worktree add DIR <rev>` with node_modules
 * linked) run as one more front-door target and one more ext_proc target, alternated with this
 * one's: an A/B of both transports in the same run.
 *
 * `--paired N` (with `--base`): only the A/B, measured concurrently — each round loads both
 * Gearboxes at once, half the clients each from a client process of its own (which process drives
 * which alternates), so both see the same machine at the same moments; the change is the median
 * over N rounds of the per-round ratio of CPU per request. Targets measured one after the other
 * moved ±7 % against an identical copy of themselves (an A/A run) on this shared 2-core machine;
 * measured this way the A/A stays within a few per cent (bench/RESULTS.md).
 */
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { median, numberArg, runBench, startProcess, startRole } from "./processes.ts";
import { freePort } from "../common/net/free-port.ts";
import type { Run } from "./cpu/client.ts";
import { Client, cpuMs, startGearbox, until } from "./cpu/harness.ts";
import { TARGET, runsTable, verdictLines, verdicts, type Row, type Scenarios, type Verdict } from "./cpu/goals.ts";

const ROUNDS = numberArg("rounds", 3);
/** `--runs N`: the whole set of scenarios N times over the same processes, each run judged, then one table of every run. */
const RUNS = numberArg("runs", 1);
const REQUESTS = numberArg("requests", 3000);
const portkeyAt = process.argv.indexOf("--portkey");
const PORTKEY = portkeyAt > 0 ? process.argv[portkeyAt + 1] : undefined;
const baseAt = process.argv.indexOf("--base");
const BASE = baseAt > 0 ? process.argv[baseAt + 1] : undefined;
const PAIRED = process.argv.includes("--paired") ? numberArg("paired", 11) : undefined;
const TURNS = numberArg("turns", 2);
const onlyAt = process.argv.indexOf("--only");
/** `--only "16 clients,stream"`: run only the scenarios whose title contains one of these. */
const ONLY = onlyAt > 0 ? process.argv[onlyAt + 1]?.split(",") : undefined;
interface Target {
  name: string;
  pid: number;
  run: (concurrency: number, requests: number, stream: boolean) => Run;
}

const pct = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))] ?? NaN;

async function measure(client: Client, target: Target, concurrency: number, requests: number, stream: boolean): Promise<Row> {
  const before = cpuMs(target.pid);
  const r = await client.run(target.run(concurrency, requests, stream));
  const cpu = cpuMs(target.pid) - before;
  if (r.errors > 0) console.error(`  ${target.name}: ${r.errors} errors, first: ${r.firstError ?? ""}`);
  return {
    rps: r.requests / r.seconds,
    p50: pct(r.latencies, 0.5),
    p99: pct(r.latencies, 0.99),
    firstByteP50: pct(r.firstBytes, 0.5),
    thereP50: pct(r.there, 0.5),
    backP50: pct(r.back, 0.5),
    cpuPerRequestMs: cpu / r.requests,
    errors: r.errors,
  };
}

function medianRow(rows: Row[]): Row {
  const m = (k: keyof Row) => median(rows.map((r) => r[k]));
  return {
    rps: m("rps"),
    p50: m("p50"),
    p99: m("p99"),
    firstByteP50: m("firstByteP50"),
    thereP50: m("thereP50"),
    backP50: m("backP50"),
    cpuPerRequestMs: m("cpuPerRequestMs"),
    errors: rows.reduce((s, r) => s + r.errors, 0),
  };
}

async function scenario(client: Client, title: string, targets: Target[], concurrency: number, stream: boolean): Promise<Map<string, Row>> {
  if (ONLY && !ONLY.some((word) => title.includes(word))) return new Map();
  const rows = new Map<string, Row[]>(targets.map((t) => [t.name, []]));
  // An untimed round per target at this scenario's concurrency first: the client's connections
  // at this concurrency open here, each costing a proxy a connection to the upstream as well, not
  // in the first measured round (at 64 clients a first round's p99 was 1.5–4× a steady one's, for
  // Gearbox and the bare proxy alike; bench/RESULTS.md).
  for (const target of targets) await client.run(target.run(concurrency, REQUESTS, stream));
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < targets.length; i++) {
      const target = targets[(i + round) % targets.length] as Target;
      rows.get(target.name)?.push(await measure(client, target, concurrency, REQUESTS, stream));
    }
  }
  const out = new Map([...rows].map(([name, rs]) => [name, medianRow(rs)]));
  console.log(`\n### ${title}\n`);
  console.log("| target | req/s | p50 ms | p99 ms |" + (stream ? " first byte p50 ms | there p50 ms | back p50 ms |" : "") + " CPU ms/request | errors |");
  console.log("|---|---:|---:|---:|" + (stream ? "---:|---:|---:|" : "") + "---:|---:|");
  for (const [name, r] of out)
    console.log(
      `| ${name} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} |${stream ? ` ${r.firstByteP50.toFixed(2)} | ${r.thereP50.toFixed(2)} | ${r.backP50.toFixed(2)} |` : ""} ${r.cpuPerRequestMs.toFixed(3)} | ${r.errors} |`,
    );
  return out;
}

/**
 * Requests before any is measured: connections open, and the JIT past its warm-up. Traced with
 * `--trace-opt` at one client, `gearbox serve` still compiled 102 functions with TurboFan between
 * its 1,000th and 2,000th request and 33 up to the 3,000th (a few per thousand from the 4,000th
 * on), on background threads whose CPU the process's time includes: with the 1,000 requests this
 * bench warmed up with before, the first measured scenario paid for them. JSON and streams both,
 * every target alike.
 */
const WARM_UP_JSON = numberArg("warm-up", 5000);
const WARM_UP = { json: WARM_UP_JSON, stream: Math.ceil(WARM_UP_JSON / 2) };

async function warmUp(client: Client, target: Target, concurrency: number): Promise<void> {
  await client.run(target.run(concurrency, WARM_UP.json, false));
  await client.run(target.run(concurrency, WARM_UP.stream, true));
}

/** `--paired`: the two Gearboxes loaded at the same time, `concurrency / 2` clients each; per-round CPU ratios. */
async function pairedScenario(clients: [Client, Client], title: string, a: Target, b: Target, concurrency: number, stream: boolean): Promise<void> {
  const ratios: number[] = [];
  const cpu: [number[], number[]] = [[], []];
  for (let round = 0; round < (PAIRED ?? 0); round++) {
    const [first, second] = round % 2 === 0 ? clients : [clients[1], clients[0]];
    const [ra, rb] = await Promise.all([measure(first, a, concurrency / 2, REQUESTS, stream), measure(second, b, concurrency / 2, REQUESTS, stream)]);
    cpu[0].push(ra.cpuPerRequestMs);
    cpu[1].push(rb.cpuPerRequestMs);
    ratios.push(ra.cpuPerRequestMs / rb.cpuPerRequestMs);
  }
  const change = (ratio: number) => ((ratio - 1) * 100).toFixed(1);
  console.log(
    `| ${title} | ${median(cpu[0]).toFixed(3)} | ${median(cpu[1]).toFixed(3)} | ${change(median(ratios))} % | ${change(pct(ratios, 0.25))} … ${change(pct(ratios, 0.75))} % |`,
  );
}

async function pairedMain(frontTargets: Target[]): Promise<void> {
  const [a, b] = [frontTargets.find((t) => t.name === TARGET.gearbox), frontTargets.find((t) => t.name === TARGET.base)];
  if (!a || !b) throw new Error("--paired needs --base");
  const clients: [Client, Client] = [await Client.start(), await Client.start()];
  for (const t of [a, b]) for (const c of clients) await warmUp(c, t, 4);
  console.log(
    `# CPU per request, paired A/B — ${new Date().toISOString()} — node ${process.version}, ${os.cpus().length} cores, ${PAIRED} rounds × ${REQUESTS} requests each, concurrent\n`,
  );
  console.log("| scenario | this tree CPU ms/request | base CPU ms/request | change (median of per-round ratios) | interquartile range |");
  console.log("|---|---:|---:|---:|---:|");
  await pairedScenario(clients, "JSON, 2 × 1 client", a, b, 2, false);
  await pairedScenario(clients, "JSON, 2 × 8 clients", a, b, 16, false);
  await pairedScenario(clients, "JSON, 2 × 32 clients", a, b, 64, false);
  await pairedScenario(clients, "stream (20 chunks), 2 × 8 clients", a, b, 16, true);
  for (const c of clients) c.stop();
}

async function main(): Promise<void> {
  const role = (name: string, ...args: string[]) => startRole(new URL("./roles.ts", import.meta.url), name, ...args);
  const upstream = await role("recorded-upstream");
  const upstreamOrigin = `http://127.0.0.1:${upstream.port}`;
  const proxy = await role("bare-proxy", upstreamOrigin);
  const noop = await role("noop");
  const gearbox = await startGearbox(fileURLToPath(new URL("../bin/gearbox.mjs", import.meta.url)), upstreamOrigin);
  const ports = gearbox.ports;
  const http = (name: string, pid: number, url: string, headers?: Record<string, string>): Target => ({
    name,
    pid,
    run: (concurrency, requests, stream) => ({ kind: "http", url, concurrency, requests, stream, turns: TURNS, ...(headers && { headers }) }),
  });
  const path_ = "/v1/chat/completions";
  const frontTargets: Target[] = [
    http(TARGET.bare, Number(proxy.pid), `http://127.0.0.1:${proxy.port}${path_}`),
    http(TARGET.gearbox, gearbox.pid, `http://127.0.0.1:${ports.http}${path_}`),
  ];
  const base = BASE ? await startGearbox(path.join(BASE, "bin/gearbox.mjs"), upstreamOrigin) : undefined;
  if (base) frontTargets.push(http(TARGET.base, base.pid, `http://127.0.0.1:${base.ports.http}${path_}`));

  if (PAIRED) return pairedMain(frontTargets);

  if (PORTKEY) {
    const port = await freePort();
    const portkey = startProcess(
      process.execPath,
      [path.join(PORTKEY, "node_modules/@portkey-ai/gateway/build/start-server.js"), `--port=${port}`, "--headless"],
      {
        env: { ...process.env, NODE_ENV: "production" },
        quiet: true, // its stack traces for the failing streams (see RESULTS.md) would drown the tables
      },
    );
    await until(async () => (await fetch(`http://127.0.0.1:${port}/`)).ok, "Portkey");
    frontTargets.push(
      http(TARGET.portkey, portkey.pid ?? 0, `http://127.0.0.1:${port}${path_}`, {
        "x-portkey-provider": "openai",
        "x-portkey-custom-host": `${upstreamOrigin}/v1`,
        authorization: "Bearer sk-bench",
      }),
    );
  }
  const answer = readFileSync(fileURLToPath(new URL("../test/fixtures/vercel-ai/openai/openai-text.json", import.meta.url)), "utf8");
  const extTargets: Target[] = [
    {
      name: TARGET.noopExtProc,
      pid: Number(noop.pid),
      run: (concurrency, requests) => ({ kind: "extproc", address: String(noop.address), concurrency, requests, answer, turns: TURNS }),
    },
    {
      name: TARGET.gearboxExtProc,
      pid: gearbox.pid ?? 0,
      run: (concurrency, requests) => ({ kind: "extproc", address: `127.0.0.1:${ports.extProc}`, concurrency, requests, answer, turns: TURNS }),
    },
  ];
  if (base)
    extTargets.push({
      name: TARGET.baseExtProc,
      pid: base.pid,
      run: (concurrency, requests) => ({ kind: "extproc", address: `127.0.0.1:${base.ports.extProc}`, concurrency, requests, answer, turns: TURNS }),
    });
  const direct = http(TARGET.direct, Number(upstream.pid), `${upstreamOrigin}${path_}`);

  const client = await Client.start();
  for (const t of [...frontTargets, direct]) await warmUp(client, t, 8);
  for (const t of extTargets) await client.run(t.run(8, 1000, false));

  const runs: Verdict[][] = [];
  for (let run = 1; run <= RUNS; run++) {
    console.log(
      `${run > 1 ? "\n" : ""}# CPU per request${RUNS > 1 ? `, run ${run} of ${RUNS}` : ""} — ${new Date().toISOString()} — node ${process.version}, ${os.cpus().length} cores, ${ROUNDS} rounds × ${REQUESTS} requests, medians${TURNS === 2 ? "" : `, ${TURNS} messages per request`}`,
    );
    const scenarios: Scenarios = {
      json1: await scenario(client, "JSON, 1 client", frontTargets, 1, false),
      json16: await scenario(client, "JSON, 16 clients", frontTargets, 16, false),
      json64: await scenario(client, "JSON, 64 clients", frontTargets, 64, false),
      stream16: await scenario(client, "stream (20 chunks), 16 clients", frontTargets, 16, true),
      first: await scenario(client, "stream (20 chunks), 1 client: first byte", [direct, ...frontTargets], 1, true),
      ext: await scenario(client, "ext_proc full cycle (4 messages, one stream per request), 16 streams", extTargets, 16, false),
    };
    // The goals are set for the default request; a longer one is measured, not judged.
    if (TURNS !== 2) continue;
    const verdictsOfRun = verdicts(scenarios);
    console.log(verdictLines(verdictsOfRun));
    runs.push(verdictsOfRun);
  }
  if (runs.length > 1) console.log(runsTable(runs));
  client.stop();
}

runBench(main);
