#!/usr/bin/env node
// The `gearbox` executable: runs the TypeScript sources through Gearbox's own loader (ts-loader.mjs).
import "./ts-loader.mjs";

await import("../cli/gearbox.ts");
