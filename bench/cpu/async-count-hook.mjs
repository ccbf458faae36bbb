/**
 * Preloaded (`--import`) into a process by `async-resources.ts`: counts the async resources the
 * process creates (promises, `process.nextTick` ticks, timers…) by type, between two SIGUSR2s,
 * and writes the counts to `$ASYNC_COUNT_FILE` at the second. An init hook makes every promise
 * dearer: the counts are the figure, not the process's speed.
 */
import { createHook } from "node:async_hooks";
import { writeFileSync } from "node:fs";
import process from "node:process";

let counts = {};
let on = false;
createHook({
  init(_id, type) {
    if (on) counts[type] = (counts[type] ?? 0) + 1;
  },
}).enable();
process.on("SIGUSR2", () => {
  if (on) writeFileSync(process.env.ASYNC_COUNT_FILE ?? `async-count-${process.pid}.json`, JSON.stringify(counts));
  counts = {};
  on = !on;
});
