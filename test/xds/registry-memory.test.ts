/**
 * Memory: thousands of agent sessions come and go (closed, cancelled, replaced, expired) and the
 * control plane keeps nothing of them — the brief's "unreclaimed heartbeats leaked memory until
 * the gateway died". The cycles run in a child process with `--expose-gc`
 * (`registry-memory-cycles.ts`) so the heap is measured after real collections.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";

const run = promisify(execFile);
const SCRIPT = path.join(import.meta.dirname, "registry-memory-cycles.ts");
const MB = 1024 * 1024;

interface CyclesReport {
  cycles: number;
  afterWarmup: number;
  atMidway: number;
  atEnd: number;
  joins: number;
  agents: number;
  stats: { agents: number; heartbeats: number; sweeping: boolean };
  retained: number;
}

async function cycles(count: number, ...flags: string[]): Promise<CyclesReport> {
  const { stdout } = await run(process.execPath, ["--expose-gc", "--import", "tsx", SCRIPT, String(count), "300", ...flags], {
    cwd: path.resolve(import.meta.dirname, "../.."),
  });
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as CyclesReport;
}

/*
 * The bounds. Measured on the clean run: the heap after GC grows ~2 MB between cycle 300 and
 * cycle 1650 and then stays flat (±0.3 MB to cycle 3000; 6,000 cycles give the same ~2 MB): that
 * is one-off warm-up (JIT, grpc-js's lazily built structures), not per-session state. A leak
 * grows with the cycles: keeping one client stream per cycle reachable costs ~12 KB a cycle
 * (the control run below: ~16 MB per 1,350 cycles), and a session the registry failed to free
 * would hold its server-side call, of the same order. So: less than 5 MB over the 2,700 cycles
 * after the first 300 (< 2 KB a cycle), and less than 2 MB over the last 1,350 (< 1.6 KB a
 * cycle). Both sit well above the warm-up and far below any leak of a stream or session.
 */
const TOTAL_BOUND = 5 * MB;
const SECOND_HALF_BOUND = 2 * MB;

test("3,000 connect/hello/heartbeat/disconnect cycles: no agent, no timer left; the heap after GC stays within the leak bound", async () => {
  const report = await cycles(3000);
  assert.equal(report.agents, 0);
  assert.equal(report.stats.agents, 0);
  assert.equal(report.stats.sweeping, false, "the sweeping timer stops once no agent is listed");
  assert.equal(report.joins, 3000 + 750, "every cycle's session joined, and one replacement in four cycles");
  const total = report.atEnd - report.afterWarmup;
  const secondHalf = report.atEnd - report.atMidway;
  assert.ok(total < TOTAL_BOUND, `heap grew ${(total / MB).toFixed(2)} MB after the first 300 cycles`);
  assert.ok(secondHalf < SECOND_HALF_BOUND, `heap grew ${(secondHalf / MB).toFixed(2)} MB over the second half`);
});

test("control: the same bounds catch a leak of one stream per cycle", async () => {
  const report = await cycles(1500, "--retain-streams");
  assert.equal(report.retained, 1500);
  assert.equal(report.stats.agents, 0, "the registry itself still frees everything");
  assert.ok(report.atEnd - report.afterWarmup > TOTAL_BOUND, `leaky run grew ${((report.atEnd - report.afterWarmup) / MB).toFixed(2)} MB`);
  assert.ok(report.atEnd - report.atMidway > SECOND_HALF_BOUND, `leaky run grew ${((report.atEnd - report.atMidway) / MB).toFixed(2)} MB over its second half`);
});
