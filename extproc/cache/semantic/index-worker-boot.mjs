// Entry point of the vector-index worker thread: registers the loader Gearbox ships with
// (bin/ts-loader.mjs), then runs the TypeScript worker. A worker does not inherit loader hooks
// from `register()` (bin/gearbox.mjs), and `--import` in a worker's execArgv does not apply to its
// entry module, so the worker registers its own.
import "../../../bin/ts-loader.mjs";

await import("./index-worker.ts");
