/**
 * `npm run bench:faults`: the fault matrix of issue 15, on real processes (`gearbox extproc` /
 * `gearbox xds` children, a redis-server child, a tiny-model edge agent, provider emulators that
 * fail on demand, the Envoy harness). Every scenario stops by itself; loopback only.
 *
 * Prints one markdown table (and writes it with the per-scenario JSON to `--out`, default
 * `bench/faults-results.json`). `--only <text>` runs the scenarios whose name contains it;
 * `--rate` (default 50) and `--seconds` (default 25 for Redis, 10 otherwise) shape the load.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { numberArg } from "./processes.ts";
import { startLab, type Lab } from "../test/faults/lab.ts";
import { memoryOverFaults, providerFault, providerRuns } from "./faults/provider-scenarios.ts";
import { markdownTable } from "./faults/report.ts";
import { controlPlaneRestarted, edgeAgentKilled, extProcRestarted, redisOutage } from "./faults/state-scenarios.ts";
import type { Row } from "./faults/tally.ts";

function stringArg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const rate = numberArg("rate", 50);
  const redisSeconds = numberArg("seconds", 25);
  const only = stringArg("only");
  const out = stringArg("out") ?? "bench/faults-results.json";
  const dir = mkdtempSync(path.join(tmpdir(), "gearbox-faults-"));
  const lab: Lab = await startLab(dir);
  const scenarios: Array<[string, () => Promise<Row>]> = [
    ["redis stop", () => redisOutage(lab, "stopped (SIGTERM)", { rate, seconds: redisSeconds })],
    ["redis freeze", () => redisOutage(lab, "frozen (SIGSTOP)", { rate, seconds: redisSeconds })],
    ["redis crash", () => redisOutage(lab, "crashed and restarted (SIGKILL)", { rate, seconds: 12 })],
    ["edge agent", () => edgeAgentKilled(lab, { rate: 3, seconds: 12 })],
    ...providerRuns(["front door", "envoy"], { rate, seconds: 10 }).map((run): [string, () => Promise<Row>] => [
      `${run.scenario} ${run.transport}`,
      () => providerFault(lab, run),
    ]),
    ["control plane", () => controlPlaneRestarted(lab, { rate, seconds: 12 })],
    ["ext_proc allow", () => extProcRestarted(lab, { rate, seconds: 12 }, true)],
    ["ext_proc deny", () => extProcRestarted(lab, { rate, seconds: 12 }, false)],
    // Long enough (~30 s here) to outlast two of the runaway check's 10 s windows: its counters fill in that time, then level.
    ["memory", () => memoryOverFaults(lab, numberArg("memory-requests", 100_000))],
  ];
  const rows: Row[] = [];
  try {
    for (const [name, run] of scenarios) {
      if (only !== undefined && !name.includes(only)) continue;
      const started = Date.now();
      console.error(`— ${name}…`);
      try {
        const row = await run();
        rows.push(row);
        console.error(
          `  ${row.succeeded}/${row.sent} ok, failed ${JSON.stringify(row.failed)}, goal ${row.goal ? (row.goal.met ? "met" : "NOT met") : "-"} (${((Date.now() - started) / 1000).toFixed(0)} s)`,
        );
      } catch (err) {
        console.error(`  scenario ${name} could not run: ${err instanceof Error ? err.message : String(err)}`);
        process.exitCode = 1;
      }
    }
  } finally {
    await lab.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const table = markdownTable(rows);
  console.log(table);
  writeFileSync(
    out,
    JSON.stringify(
      {
        command: `npm run bench:faults${process.argv.slice(2).length ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`,
        date: new Date().toISOString(),
        rows,
        table,
      },
      null,
      2,
    ) + "\n",
  );
}

main().then(
  () => process.exit(),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
