/** The shared limiter suite on the in-memory store, on a fake clock. */
import { limiterCases } from "./limiter.case.test.ts";
import { MemoryLimiter } from "./memory-limiter.ts";

limiterCases("memory", () => {
  let now = Date.UTC(2026, 0, 1);
  return {
    store: new MemoryLimiter(() => now),
    now: () => now,
    advance: (ms) => {
      now += ms;
      return Promise.resolve();
    },
  };
});
