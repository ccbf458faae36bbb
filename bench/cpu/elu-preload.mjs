// Preloaded into a Gearbox process (`node --import bench/cpu/elu-preload.mjs …`, or as a variant of
// bench/cpu/variants.ts): every second, appends the main thread's event-loop utilization and the
// process's CPU seconds over that second to $GEARBOX_ELU_FILE (default /tmp/gearbox-elu-<pid>.txt),
// one `<epoch ms> elu=<0..1> cpu=<s>` line each. How the nineteenth pass of issue 25 saw the main
// thread saturate at 16 clients (bench/RESULTS.md).
import { appendFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { setInterval } from "node:timers";

const file = process.env.GEARBOX_ELU_FILE ?? `/tmp/gearbox-elu-${process.pid}.txt`;
let last = performance.eventLoopUtilization();
let cpu = process.cpuUsage();
setInterval(() => {
  const now = performance.eventLoopUtilization();
  const used = performance.eventLoopUtilization(now, last).utilization;
  const spent = process.cpuUsage(cpu);
  last = now;
  cpu = process.cpuUsage();
  appendFileSync(file, `${Date.now()} elu=${used.toFixed(3)} cpu=${((spent.user + spent.system) / 1e6).toFixed(3)}\n`);
}, 1000).unref();
