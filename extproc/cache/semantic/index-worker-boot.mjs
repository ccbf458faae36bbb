// Entry point of the vector-index worker thread: registers tsx's loader, then runs the
// TypeScript worker. A worker does not inherit loader hooks from `register()` (bin/gearbox.mjs),
// and `--import tsx` in a worker's execArgv does not apply to its entry module, so the worker
// registers its own.
import { register } from "tsx/esm/api";

register();
await import("./index-worker.ts");
