// Registers the hooks that run Gearbox's TypeScript sources (ts-hooks.mjs) in this thread, and
// turns on source maps so a stack trace names TypeScript files and lines.
import { register } from "node:module";
import process from "node:process";

process.setSourceMapsEnabled(true);
register("./ts-hooks.mjs", import.meta.url);
