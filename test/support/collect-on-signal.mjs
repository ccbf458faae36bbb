// Preloaded (`node --expose-gc --import`) into a gateway the fault bench reads memory from: SIGUSR2
// runs a full collection, so the heap it then reports is what is live, not what is waiting to be
// collected (bench/faults: the memory scenario).
import process from "node:process";

process.on("SIGUSR2", () => globalThis.gc?.());
