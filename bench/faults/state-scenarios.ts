/**
 * Fault scenarios of Gearbox's own dependencies: Redis stopped, frozen or crashed under steady
 * load with auth, limits and the exact cache on; an edge agent killed mid-generation; the control
 * plane restarted; the ext_proc service restarted behind the Envoy harness.
 */
import { fork } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { startEnvoy } from "../../test/harness/envoy.ts";
import { shippedEnvoySettings } from "../../test/support/envoy-settings.ts";
import { RedisChild } from "../../test/support/redis-child.ts";
import { freePorts } from "../../test/support/gateway-process.ts";
import { PRIMARY_MODEL, startGateway, type Lab } from "../../test/faults/lab.ts";
import { failures, tally, type Row } from "./tally.ts";
import { chat, openLoop, type Sample } from "../../test/faults/traffic.ts";

export interface Load {
  rate: number;
  seconds: number;
}

/** Waits until `ms` after `startedAt` (a `performance.now()` value). */
export async function at(startedAt: number, ms: number): Promise<void> {
  const wait = startedAt + ms - performance.now();
  if (wait > 0) await sleep(wait);
}

/** Mostly unique prompts; every fifth one of 20 hot prompts, so the exact cache hits too (each hot prompt every 2 s: no runaway). */
function cachedMix(run: string, headers: Record<string, string>) {
  return (i: number) =>
    chat(PRIMARY_MODEL, i % 5 === 0 ? `${run} hot question ${Math.floor(i / 5) % 20}` : `${run} question ${i}`, headers, { temperature: 0 });
}

export type RedisFault = "stopped (SIGTERM)" | "frozen (SIGSTOP)" | "crashed and restarted (SIGKILL)";

/** Redis goes away at 5 s for `downForMs` (a crash comes straight back) under `load`; tenant `shop` at 30 req/s. */
export async function redisOutage(lab: Lab, fault: RedisFault, load: Load, downForMs = 10_000): Promise<Row> {
  const redis = await RedisChild.start({ persistDir: mkdtempSync(path.join(lab.dir, "redis-")) });
  const limit = 30;
  const { gateway, headers, notes } = await startGateway(lab, { name: `redis-${fault.split(" ")[0] ?? ""}`, redis, tenantRps: limit, exactCache: true });
  try {
    const before = await gateway.memory();
    lab.resetCounts();
    const logsFrom = gateway.logs.length;
    const samples = await openLoop(
      { url: gateway.url, rate: load.rate, seconds: load.seconds, timeoutMs: 15_000, request: cachedMix(`redis-${Date.now()}`, headers) },
      async (t0) => {
        await at(t0, 5_000);
        switch (fault) {
          case "stopped (SIGTERM)":
            await redis.down("SIGTERM");
            await at(t0, 5_000 + downForMs);
            await redis.up();
            return;
          case "frozen (SIGSTOP)":
            redis.signal("SIGSTOP");
            await at(t0, 5_000 + downForMs);
            redis.signal("SIGCONT");
            return;
          case "crashed and restarted (SIGKILL)":
            await redis.down("SIGKILL");
            await redis.up();
            return;
          default: {
            const never: never = fault;
            throw new Error(`unknown fault ${String(never)}`);
          }
        }
      },
    );
    const row = tally({
      scenario: `Redis ${fault}${fault.startsWith("crashed") ? "" : ` ${downForMs / 1000} s`}, auth + ${limit} req/s limit + exact cache`,
      transport: "front door",
      samples,
      upstreamCalls: lab.upstreamCalls(),
      limit: { perSecond: limit, logs: gateway.logs.slice(logsFrom) },
    });
    row.memoryBefore = before;
    row.memoryAfter = await gateway.memory();
    row.notes.push(
      ...notes,
      `${load.rate} req/s offered for ${load.seconds} s, fault at 5 s; over a limit: admissions past ${limit} in a second of the gateway's clock (request log)`,
    );
    // A stale keep-alive connection to the provider (`502 upstream_*`) is the provider's fault, not Redis's: shown, not blamed.
    row.goal = {
      text: "0 failed because Redis did; 0 over the limit",
      met: failures(row, (cause) => !cause.startsWith("502 upstream")) === 0 && (row.overLimit ?? 0) === 0,
    };
    return row;
  } finally {
    await gateway.stop();
    await redis.down();
  }
}

/** An edge agent (real, tiny GGUF model) is SIGKILLed at 4 s while serving edge-routed calls; the upgrade to cloud is on. */
export async function edgeAgentKilled(lab: Lab, load: Load): Promise<Row> {
  const agent = fork(fileURLToPath(new URL("./edge-role.ts", import.meta.url)), [], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const [ready] = (await once(agent, "message")) as [{ address: string }];
  // The brief's policy: summaries of low complexity go to the edge, the cloud upgrade is on.
  const route =
    "route:\n  rules:\n    - when: { intent: [summarize], estimated_complexity: low }\n      target: edge\n  fallback: { enable: true, confidence_threshold: 0.6, upgrade_target: cloud }\n";
  const extra = `edge:\n  agents: [{ address: "${ready.address}", models: [tiny] }]\n  default_model: tiny\n  timeout_ms: 5000\n${route}`;
  const { gateway, notes } = await startGateway(lab, { name: "edge-kill", extra });
  try {
    const before = await gateway.memory();
    lab.resetCounts();
    const request = (i: number) => chat(PRIMARY_MODEL, `Summarize this in one sentence: the meeting on day ${i} moved to Friday.`, {}, { maxTokens: 24 });
    const samples = await openLoop({ url: gateway.url, rate: load.rate, seconds: load.seconds, timeoutMs: 20_000, request }, async (t0) => {
      await at(t0, 4_000);
      agent.kill("SIGKILL");
    });
    const row = tally({
      scenario: "edge agent SIGKILLed mid-generation (tiny GGUF, llama.cpp)",
      transport: "front door",
      samples,
      upstreamCalls: lab.upstreamCalls(),
    });
    const edgeAnswers = samples.filter((s) => s.route === "edge" && s.cause === "ok").length;
    row.extraCalls = 0;
    row.extraShare = 0;
    row.memoryBefore = before;
    row.memoryAfter = await gateway.memory();
    row.notes.push(...notes, `${edgeAnswers} answered by the edge, ${row.upstreamCalls} by the cloud (upgrades, and every call after the kill)`);
    row.goal = { text: "0 failed (upgrade to cloud)", met: failures(row) === 0 };
    return row;
  } finally {
    agent.kill("SIGKILL");
    await gateway.stop();
  }
}

/** `gearbox extproc` follows `gearbox xds`; the control plane is SIGKILLed at 4 s and back at 8 s. */
export async function controlPlaneRestarted(lab: Lab, load: Load): Promise<Row> {
  const xdsPorts = await freePorts();
  const plane = await startGateway(lab, { name: "xds", mode: "xds", ports: xdsPorts });
  const { gateway, notes } = await startGateway(lab, { name: "follower", extra: `xds: { address: "127.0.0.1:${xdsPorts.xds}" }\n` });
  try {
    const before = await gateway.memory();
    lab.resetCounts();
    const samples = await openLoop(
      { url: gateway.url, rate: load.rate, seconds: load.seconds, timeoutMs: 15_000, request: (i) => chat(PRIMARY_MODEL, `control plane question ${i}`) },
      async (t0) => {
        await at(t0, 4_000);
        await plane.gateway.stop("SIGKILL");
        await at(t0, 8_000);
        await plane.gateway.start();
      },
    );
    const row = tally({ scenario: "control plane SIGKILLed at 4 s, restarted at 8 s", transport: "front door", samples, upstreamCalls: lab.upstreamCalls() });
    row.memoryBefore = before;
    row.memoryAfter = await gateway.memory();
    row.notes.push(...notes, ...plane.notes);
    row.goal = { text: "0 failed", met: failures(row) === 0 };
    return row;
  } finally {
    await gateway.stop();
    await plane.gateway.stop();
  }
}

/** Behind the Envoy harness, the ext_proc process is SIGKILLed at 3 s and started again at 6 s. */
export async function extProcRestarted(lab: Lab, load: Load, failureModeAllow: boolean): Promise<Row> {
  const { gateway, notes } = await startGateway(lab, { name: `extproc-restart-${String(failureModeAllow)}` });
  const shipped = shippedEnvoySettings();
  const envoy = await startEnvoy({
    extProc: { ...shipped.extProc, address: gateway.extProcAddress, failureModeAllow },
    routes: [
      { header: "x-gearbox-upstream", value: "openai", cluster: "openai" },
      { header: "x-gearbox-upstream", value: "backup", cluster: "backup" },
    ],
    defaultCluster: "openai",
    clusters: { openai: { url: lab.primary.url }, backup: { url: lab.backup.url } },
    bufferLimitBytes: shipped.bufferLimitBytes ?? 8 * 1024 * 1024,
    routeTimeoutMs: 60_000,
  });
  try {
    lab.resetCounts();
    let restartedAt = NaN;
    const samples: Sample[] = await openLoop(
      { url: envoy.url, rate: load.rate, seconds: load.seconds, timeoutMs: 15_000, request: (i) => chat(PRIMARY_MODEL, `ext_proc restart question ${i}`) },
      async (t0) => {
        await at(t0, 3_000);
        await gateway.stop("SIGKILL");
        await at(t0, 6_000);
        await gateway.start();
        restartedAt = performance.now() - t0;
      },
    );
    const row = tally({
      scenario: `ext_proc SIGKILLed at 3 s, restarted at 6 s (failure_mode_allow ${String(failureModeAllow)})`,
      transport: "envoy",
      samples,
      upstreamCalls: lab.upstreamCalls(),
    });
    const unprocessed = samples.filter((s) => s.cause === "ok" && s.route === undefined).length;
    row.extraCalls = 0;
    row.extraShare = 0;
    row.notes.push(
      ...notes,
      `serving again ${(restartedAt / 1000).toFixed(1)} s in; ${unprocessed} answered without Gearbox (passed through unprocessed: no credentials injected, no limits, no log)`,
    );
    row.goal = failureModeAllow
      ? { text: "calls pass while ext_proc is down", met: failures(row) === 0 }
      : {
          text: "calls fail closed (Envoy's 500) while down; processed again once it is back",
          met:
            Object.keys(row.failed).every((c) => c.startsWith("500 ")) &&
            samples.filter((s) => s.sentAt > load.seconds * 1000 - 2_000).every((s) => s.cause === "ok"),
        };
    const lastFailure = Math.max(...samples.filter((s) => s.cause !== "ok").map((s) => s.sentAt));
    if (Number.isFinite(lastFailure))
      row.notes.push(`last failed call sent ${(lastFailure / 1000).toFixed(1)} s in (the side stream's gRPC channel reconnects with back-off)`);
    return row;
  } finally {
    await envoy.close();
    await gateway.stop();
  }
}
