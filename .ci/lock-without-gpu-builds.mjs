#!/usr/bin/env node
/**
 * Keeps node-llama-cpp's GPU builds (CUDA, Vulkan: about 620 MB on linux x64) out of
 * package-lock.json, so `npm ci` installs only the CPU build of llama.cpp. They are optional
 * dependencies of node-llama-cpp, which npm would otherwise install on every matching host, and
 * npm has no option that omits some optional dependencies but not others. `npm ci` installs the
 * lockfile as written; a lockfile rewritten from scratch (a node-llama-cpp upgrade) brings them
 * back, and test/install/footprint.test.ts then fails until this is run again:
 *
 *   npm install --package-lock-only && npm run lock:no-gpu
 *
 * GPU hosts opt in with `npm run edge:gpu` (README, "Footprint").
 */
import console from "node:console";
import { readFileSync, writeFileSync } from "node:fs";
import process from "node:process";
import { URL } from "node:url";

/** Lockfile keys of node-llama-cpp's GPU builds: `…/@node-llama-cpp/<os>-<arch>-cuda|cuda-ext|vulkan`. */
export const GPU_BUILD = /(^|\/)node_modules\/@node-llama-cpp\/[a-z0-9]+-[a-z0-9]+-(cuda|cuda-ext|vulkan)$/;

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = new URL("../package-lock.json", import.meta.url);
  const lock = JSON.parse(readFileSync(file, "utf8"));
  const dropped = Object.keys(lock.packages).filter((key) => GPU_BUILD.test(key));
  for (const key of dropped) delete lock.packages[key];
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(dropped.length ? `dropped from package-lock.json:\n  ${dropped.join("\n  ")}` : "package-lock.json holds no GPU build");
}
