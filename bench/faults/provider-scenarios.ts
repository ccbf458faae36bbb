/**
 * Fault scenarios of the providers: a 429 storm with and without a healthy fallback, a 500 storm
 * with one (latency once the breaker is open, against a fault-free baseline in the same run), a
 * provider that hangs after its headers, a reset mid-stream, and 40,000 faulted requests for
 * memory growth. Through the front door, and through the Envoy harness where Gearbox's part
 * differs (the fallback is a response-phase replacement there).
 */
import { startEnvoy, type EnvoyHarness } from "../../test/harness/envoy.ts";
import type { Fault } from "../../test/emulators/faulty-upstream.ts";
import { shippedEnvoySettings, shippedProviderRetries } from "../../test/support/envoy-settings.ts";
import { PRIMARY_MODEL, startGateway, type GatewaySpec, type Lab } from "../../test/faults/lab.ts";
import type { Load } from "./state-scenarios.ts";
import { failures, percentile, tally, type Row } from "./tally.ts";
import { chat, closedLoop, openLoop, type Sample } from "../../test/faults/traffic.ts";

export type Transport = Row["transport"];

/** Timeouts short enough for a bench, on the failing provider. */
export const BENCH_TIMEOUTS = { connect_ms: 1_000, first_byte_ms: 2_000, idle_ms: 1_000, total_ms: 10_000 };

/** The Envoy harness as `envoy/sidecar.yaml` configures Envoy: its ext_proc filter, and its provider route's retry policy and retry budget on both provider clusters. */
async function harnessFor(lab: Lab, extProcAddress: string): Promise<EnvoyHarness> {
  const shipped = shippedEnvoySettings("sidecar.yaml");
  const { retryPolicy, retryBudget } = shippedProviderRetries("sidecar.yaml", "openai");
  return startEnvoy({
    extProc: { ...shipped.extProc, address: extProcAddress },
    routes: [
      { header: "x-gearbox-upstream", value: "openai", cluster: "openai", retryPolicy },
      { header: "x-gearbox-upstream", value: "backup", cluster: "backup", retryPolicy },
    ],
    defaultCluster: "openai",
    clusters: { openai: { url: lab.primary.url, ...(retryBudget && { retryBudget }) }, backup: { url: lab.backup.url, ...(retryBudget && { retryBudget }) } },
    bufferLimitBytes: shipped.bufferLimitBytes ?? 8 * 1024 * 1024,
    routeTimeoutMs: 60_000,
  });
}

interface ProviderRun {
  scenario: string;
  transport: Transport;
  fault: Fault;
  spec: Omit<GatewaySpec, "name">;
  load: Load;
  stream?: boolean;
  /** Measure a fault-free baseline first, and the fault's latency only after `settleMs` (the breaker opening). */
  baseline?: { settleMs: number };
  goal?: (row: Row) => Row["goal"];
}

/** One provider fault under open-loop load through `transport`. */
export async function providerFault(lab: Lab, run: ProviderRun): Promise<Row> {
  const { gateway, notes } = await startGateway(lab, { name: `${run.scenario.replace(/\W+/g, "-")}-${run.transport.replace(" ", "-")}`, ...run.spec });
  const envoy = run.transport === "envoy" ? await harnessFor(lab, gateway.extProcAddress) : undefined;
  const url = envoy?.url ?? gateway.url;
  try {
    const before = await gateway.memory();
    const tag = `${run.scenario}-${run.transport}-${Date.now()}`;
    const request = (i: number) => chat(PRIMARY_MODEL, `${tag} question ${i}`, {}, { stream: run.stream === true });
    let baseline: Sample[] | undefined;
    if (run.baseline) {
      lab.primary.setFault({ kind: "none" });
      baseline = await openLoop({ url, rate: run.load.rate, seconds: run.load.seconds, timeoutMs: 15_000, request: (i) => request(1_000_000 + i) });
    }
    lab.primary.setFault(run.fault);
    lab.resetCounts();
    const samples = await openLoop({ url, rate: run.load.rate, seconds: run.load.seconds, timeoutMs: 15_000, request });
    lab.primary.setFault({ kind: "none" });
    const settle = run.baseline?.settleMs ?? 0;
    const row = tally({
      scenario: run.scenario,
      transport: run.transport,
      samples,
      upstreamCalls: lab.upstreamCalls(),
      latencyOf: (s) => s.cause === "ok" && s.sentAt >= settle,
    });
    if (baseline)
      row.baselineP50 = percentile(
        baseline.filter((s) => s.cause === "ok").map((s) => s.ms),
        50,
      );
    row.memoryBefore = before;
    row.memoryAfter = await gateway.memory();
    row.notes.push(
      ...notes,
      `${run.load.rate} req/s for ${run.load.seconds} s; primary answered ${JSON.stringify(lab.primary.answers)}, backup ${JSON.stringify(lab.backup.answers)}`,
    );
    if (settle > 0) row.notes.push(`latency of requests sent after ${settle / 1000} s (breaker open)`);
    row.goal = run.goal?.(row);
    return row;
  } finally {
    await envoy?.close();
    await gateway.stop();
  }
}

const succeededShare = (row: Row): number => row.succeeded / Math.max(1, row.sent);

/** Every provider-fault scenario, through `transports`. */
export function providerRuns(transports: readonly Transport[], load: Load): ProviderRun[] {
  const runs: ProviderRun[] = [];
  const resilient = { fallback: true, timeouts: BENCH_TIMEOUTS };
  for (const transport of transports) {
    runs.push(
      {
        scenario: "429 storm (retry-after 1), healthy fallback",
        transport,
        fault: { kind: "status", status: 429, retryAfterSeconds: 1 },
        spec: resilient,
        load,
        goal: (row) => ({ text: ">= 99.9 % succeed", met: succeededShare(row) >= 0.999 }),
      },
      {
        scenario: "429 storm (retry-after 1), no fallback",
        transport,
        fault: { kind: "status", status: 429, retryAfterSeconds: 1 },
        spec: { timeouts: BENCH_TIMEOUTS },
        load,
        goal: (row) => ({ text: "retries add <= 20 % upstream calls", met: row.extraShare <= 0.2 }),
      },
      {
        scenario: "500 storm, healthy fallback (vs fault-free baseline)",
        transport,
        fault: { kind: "status", status: 500 },
        spec: resilient,
        load,
        baseline: { settleMs: 2_000 },
        goal: (row) => ({
          text: ">= 99.9 % succeed; added p50 <= 5 ms once the breaker is open",
          met: succeededShare(row) >= 0.999 && row.p50 - (row.baselineP50 ?? NaN) <= 5,
        }),
      },
    );
  }
  runs.push(
    {
      scenario: "provider hangs after headers, fallback configured",
      transport: "front door",
      fault: { kind: "hang-after-headers" },
      spec: resilient,
      load: { rate: 5, seconds: 6 },
      goal: (row) => ({ text: "0 failed (idle timeout, then fallback)", met: failures(row) === 0 }),
    },
    {
      scenario: "reset mid-stream (after the first bytes)",
      transport: "front door",
      fault: { kind: "reset", afterBytes: 400 },
      spec: resilient,
      load: { rate: 10, seconds: 5 },
      stream: true,
      goal: (row) => ({
        text: "every cut stream surfaced as an error, none as a silent success",
        met: (row.failed["stream cut"] ?? 0) === 0 && row.succeeded + failures(row) === row.sent,
      }),
    },
  );
  return runs;
}

/**
 * `count` requests (the bench's default 100,000) to a provider answering 500 (fallback configured),
 * closed loop; the heap read after a full collection before and after each fifth, so a reading is
 * what is live rather than when the old generation was last collected.
 */
export async function memoryOverFaults(lab: Lab, count: number): Promise<Row> {
  const { gateway, notes } = await startGateway(lab, { name: "memory", fallback: true, timeouts: BENCH_TIMEOUTS, collectOnSignal: true });
  try {
    lab.primary.setFault({ kind: "status", status: 500 });
    const spec = { url: gateway.url, timeoutMs: 15_000, concurrency: 16 };
    const request = (i: number) => chat(PRIMARY_MODEL, `memory question ${i}`);
    await closedLoop({ ...spec, count: 1_000, request });
    const before = await gateway.memory({ collected: true });
    lab.resetCounts();
    // Memory after every fifth of the run: a leak grows with each.
    const series = [before];
    const samples: Sample[] = [];
    const block = Math.ceil(count / 5);
    for (let done = 0; done < count; done += block) {
      samples.push(...(await closedLoop({ ...spec, count: Math.min(block, count - done), request: (i) => request(10_000 + done + i) })));
      series.push(await gateway.memory({ collected: true }));
    }
    const after = series.at(-1) ?? before;
    lab.primary.setFault({ kind: "none" });
    const row = tally({
      scenario: `${count} faulted requests (primary 500, fallback configured)`,
      transport: "front door",
      samples,
      upstreamCalls: lab.upstreamCalls(),
    });
    row.memoryBefore = before;
    row.memoryAfter = after;
    const heaps = series.map((m) => m.heapMb);
    row.notes.push(
      ...notes,
      `heap MB after a full collection, after a 1,000-request warm-up under the same fault, then after each fifth: ${heaps.map((h) => h.toFixed(0)).join(", ")} (RSS ${series.map((m) => m.rssMb.toFixed(0)).join(", ")})`,
    );
    // No growth: the last reading is within 10 MB of the lowest after the first block (what is live; caches and counters fill in the first).
    row.goal = {
      text: "no memory growth (heap after a full collection at the end within 10 MB of the lowest after the first fifth)",
      met: after.heapMb - Math.min(...heaps.slice(1)) < 10,
    };
    return row;
  } finally {
    await gateway.stop();
  }
}
