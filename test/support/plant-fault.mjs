// Preloaded into a gateway process by test/faults/process-faults.test.ts: once the process has had
// time to start serving, plants the fault $GEARBOX_TEST_FAULT names — a promise rejected with no
// handler ("rejection"), or an exception thrown from a timer ("exception") — standing in for a bug.
import process from "node:process";
import { setTimeout } from "node:timers";

const fault = process.env.GEARBOX_TEST_FAULT;
const after = Number(process.env.GEARBOX_TEST_FAULT_AFTER_MS ?? "2000");
setTimeout(() => {
  if (fault === "rejection") void Promise.reject(new Error("planted rejection"));
  if (fault === "exception") throw new Error("planted exception");
}, after).unref();
