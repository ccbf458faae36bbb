// Preloaded into a gateway process by test/faults/process-faults.test.ts: plants the fault
// $GEARBOX_TEST_FAULT names — a promise rejected with no handler ("rejection"), or an exception
// thrown outside any call ("exception") — standing in for a bug, when the test sends SIGUSR2 once
// the process serves. (A timer planted it before: on a slow host the process was not serving yet
// when it fired, and the test saw an exit "before serving".)
import process from "node:process";

const fault = process.env.GEARBOX_TEST_FAULT;
process.on("SIGUSR2", () => {
  if (fault === "rejection") void Promise.reject(new Error("planted rejection"));
  if (fault === "exception") throw new Error("planted exception");
});
