/**
 * Async resources per request — promises, `process.nextTick` ticks, timers, sockets' async
 * resources — of `gearbox serve` on embedded defaults and of the bare proxy, one client, JSON
 * or streams; counted by an async_hooks init hook preloaded into each (`async-count-hook.mjs`).
 * Each promise and tick is a turn of work the bare proxy does not do or does too: what the
 * sixteenth pass of issue 25 counted (bench/RESULTS.md).
 *
 *   node --import tsx bench/cpu/async-resources.ts [--requests 2000] [--stream]
 */
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { numberArg, runBench, startRoleWith } from "../processes.ts";
import { Client, startGearbox } from "./harness.ts";

const REQUESTS = numberArg("requests", 2000);
const STREAM = process.argv.includes("--stream");
const HOOK = fileURLToPath(new URL("./async-count-hook.mjs", import.meta.url));

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "gearbox-async-"));
  const roles = new URL("../roles.ts", import.meta.url);
  const upstream = await startRoleWith([], roles, "recorded-upstream");
  const origin = `http://127.0.0.1:${upstream.port}`;
  const route = "/v1/chat/completions";
  // The hook reads its file name from the environment each process inherits.
  process.env.ASYNC_COUNT_FILE = path.join(dir, "gearbox.json");
  const gearbox = await startGearbox(fileURLToPath(new URL("../../bin/gearbox.mjs", import.meta.url)), origin, ["--import", HOOK]);
  process.env.ASYNC_COUNT_FILE = path.join(dir, "bare-proxy.json");
  const proxy = await startRoleWith(["--import", HOOK], roles, "bare-proxy", origin);
  const targets = [
    { name: "Gearbox front door", pid: gearbox.pid, url: `http://127.0.0.1:${gearbox.ports.http}${route}`, file: path.join(dir, "gearbox.json") },
    { name: "bare proxy", pid: Number(proxy.pid), url: `http://127.0.0.1:${proxy.port}${route}`, file: path.join(dir, "bare-proxy.json") },
  ];
  const client = await Client.start();
  const rows: [string, Record<string, number>][] = [];
  for (const t of targets) {
    await client.run({ kind: "http", url: t.url, concurrency: 1, requests: 3000, stream: STREAM }); // warm-up
    process.kill(t.pid, "SIGUSR2");
    await new Promise((r) => setTimeout(r, 200));
    await client.run({ kind: "http", url: t.url, concurrency: 1, requests: REQUESTS, stream: STREAM });
    process.kill(t.pid, "SIGUSR2");
    await new Promise((r) => setTimeout(r, 500));
    rows.push([t.name, JSON.parse(readFileSync(t.file, "utf8")) as Record<string, number>]);
  }
  client.stop();
  const types = ["PROMISE", "TickObject", "Timeout", "Immediate", "TCPWRAP", "HTTPCLIENTREQUEST"];
  console.log(`# Async resources per request — ${new Date().toISOString()} — ${STREAM ? "20-chunk streams" : "JSON"}, 1 client, ${REQUESTS} requests\n`);
  console.log(`| target | ${types.join(" | ")} | other |`);
  console.log(`|---|${types.map(() => "---:").join("|")}|---|`);
  for (const [name, counts] of rows) {
    const other = Object.entries(counts).filter(([type]) => !types.includes(type));
    const per = (n: number) => (n / REQUESTS).toFixed(2);
    console.log(
      `| ${name} | ${types.map((type) => per(counts[type] ?? 0)).join(" | ")} | ${other.map(([type, n]) => `${type} ${per(n)}`).join(", ") || "—"} |`,
    );
  }
}

runBench(main);
