import { MemoryResponseStore } from "./memory-response-store.ts";
import { responseStoreCases } from "./response-store.cases.ts";

let now = 1_000_000;
responseStoreCases("memory response store", {
  make: (ttlMs, maxResponses) => Promise.resolve(new MemoryResponseStore({ ttlMs, ...(maxResponses !== undefined && { maxResponses }) }, () => now)),
  advance: (ms) => {
    now += ms;
    return Promise.resolve();
  },
  bounded: true,
});
