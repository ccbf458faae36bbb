/**
 * A bug that rejects a promise no one handles must not take the gateway down (Node's default ends
 * the process): the real `gearbox extproc` process, with a planted unhandled rejection, logs it,
 * counts it in /metrics and keeps answering. An uncaught exception still ends it — logged first.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { freePorts, listenYaml, startGatewayProcess, type GatewayProcess } from "../support/gateway-process.ts";

const PLANT = fileURLToPath(new URL("../support/plant-fault.mjs", import.meta.url));
const dir = mkdtempSync(path.join(os.tmpdir(), "gearbox-process-faults-"));
const running: GatewayProcess[] = [];
after(async () => {
  await Promise.all(running.map((g) => g.stop("SIGKILL")));
  rmSync(dir, { recursive: true, force: true });
});

async function gateway(fault: "rejection" | "exception"): Promise<GatewayProcess> {
  const ports = await freePorts();
  const g = await startGatewayProcess({
    dir,
    name: fault,
    mode: "extproc",
    ports,
    yaml: `${listenYaml(ports)}providers:\n  - { name: openai, kind: openai, base_url: 'http://127.0.0.1:1/v1' }\n`,
    env: { GEARBOX_TEST_FAULT: fault },
    nodeArgs: ["--import", PLANT],
  });
  running.push(g);
  // Serving now: the bug happens.
  g.signal("SIGUSR2");
  return g;
}

async function until<T>(what: string, check: () => T | undefined | Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const value = await check();
    if (value !== undefined) return value;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

test("an unhandled promise rejection is logged and counted; the process serves on", async () => {
  const g = await gateway("rejection");
  const line = await until("the log line", () => g.logs.find((l) => l.msg === "unhandled promise rejection (a bug): logged, serving on"));
  assert.equal(line.level, 50, "error level");
  assert.match(String((line.err as { message?: string } | undefined)?.message), /planted rejection/);
  const health = await fetch(`${g.url}/healthz`);
  assert.equal(health.status, 200);
  const bad = await fetch(`${g.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"messages":"x"}' });
  assert.equal(bad.status, 400, "still answering calls");
  const metrics = await (await fetch(`http://127.0.0.1:${g.ports.metrics}/metrics`)).text();
  assert.match(metrics, /^gearbox_unhandled_rejections_total 1$/m);
  assert.equal(g.exitCode, undefined);
});

test("an uncaught exception ends the process, logged at fatal level first", async () => {
  const g = await gateway("exception");
  const code = await until("the exit", () => (g.exitCode === undefined ? undefined : g.exitCode));
  assert.notEqual(code, 0);
  const line = g.logs.find((l) => l.msg === "uncaught exception: the process ends");
  assert.ok(line, "the fatal line reached the log before the exit");
  assert.equal(line.level, 60);
  assert.match(String((line.err as { message?: string } | undefined)?.message), /planted exception/);
});
