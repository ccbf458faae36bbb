/**
 * The install footprint: the gateway (ext_proc, front door, control plane) needs no inference
 * engine, so a gateway-only install (`npm ci --workspaces=false`, the ext_proc image) leaves
 * node-llama-cpp, ONNX Runtime and ollama out; the edge agent's workspace owns them and loads
 * each one when it is used; `npm ci` installs llama.cpp's CPU build, never its GPU builds.
 * Figures: bench/RESULTS.md, "Install footprint".
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { REPO } from "../istio/manifests.ts";

const ENGINES = ["node-llama-cpp", "onnxruntime-node", "ollama"];
/** node-llama-cpp's GPU builds, as `.ci/lock-without-gpu-builds.mjs` drops them. */
const GPU_BUILD = /(^|\/)node_modules\/@node-llama-cpp\/[a-z0-9]+-[a-z0-9]+-(cuda|cuda-ext|vulkan)$/;

interface Manifest {
  workspaces?: string[];
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}
const manifest = (file: string): Manifest => JSON.parse(readFileSync(path.join(REPO, file), "utf8")) as Manifest;

void describe("install footprint", () => {
  void it("the root package (the gateway) has no inference engine; the edge-agent workspace owns all three (the device SDK uses it)", () => {
    const root = manifest("package.json");
    assert.deepEqual(root.workspaces, ["edge-agent", "sdk/typescript"]);
    // The device SDK reaches the engines through the edge-agent workspace, never on its own.
    const sdk = manifest("sdk/typescript/package.json");
    for (const engine of ENGINES) assert.equal(sdk.dependencies?.[engine], undefined, `${engine} in sdk/typescript's dependencies`);
    for (const engine of ENGINES) {
      assert.equal(root.dependencies?.[engine], undefined, `${engine} in the root dependencies`);
      assert.equal(root.optionalDependencies?.[engine], undefined, `${engine} in the root optionalDependencies`);
    }
    const edge = manifest("edge-agent/package.json") as Manifest & { type?: string };
    assert.deepEqual(Object.keys(edge.dependencies ?? {}).sort(), [...ENGINES].sort());
    assert.equal(edge.type, "module", "edge-agent/*.ts stay ES modules under their own package.json");
  });

  void it("package-lock.json installs llama.cpp's CPU builds and none of its GPU builds", () => {
    const lock = JSON.parse(readFileSync(path.join(REPO, "package-lock.json"), "utf8")) as { packages: Record<string, unknown> };
    const keys = Object.keys(lock.packages);
    assert.ok(keys.includes("node_modules/@node-llama-cpp/linux-x64"), "the linux x64 CPU build is locked");
    assert.ok(GPU_BUILD.test("node_modules/@node-llama-cpp/linux-x64-cuda") && !GPU_BUILD.test("node_modules/@node-llama-cpp/linux-x64"));
    const gpu = keys.filter((k) => GPU_BUILD.test(k));
    assert.deepEqual(gpu, [], "GPU builds in package-lock.json: run 'npm run lock:no-gpu'");
  });

  void it("`npm run edge:gpu` (the opt-in) installs the GPU builds of the node-llama-cpp version the workspace pins", () => {
    const pinned = manifest("edge-agent/package.json").dependencies?.["node-llama-cpp"];
    const script = (JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts["edge:gpu"] ?? "";
    const builds = [...script.matchAll(/@node-llama-cpp\/([a-z0-9-]+)@(\S+)/g)];
    assert.deepEqual(
      builds.map((m) => m[1]),
      ["linux-x64-cuda", "linux-x64-cuda-ext", "linux-x64-vulkan"],
    );
    for (const m of builds) assert.equal(m[2], pinned, `${m[1]}@${m[2]} against node-llama-cpp ${pinned}`);
    assert.match(script, /^npm install --no-save /, "the opt-in leaves package.json and the lockfile alone");
  });

  void it("the gateway's modules and the edge agent's command load with the engines' packages absent; an engine says what to install when used", async () => {
    // A child process whose module resolution cannot find the engines' packages, as after
    // `npm ci --workspaces=false`.
    const hooks = `const BLOCKED = ${JSON.stringify(ENGINES)};
export async function resolve(specifier, context, next) {
  if (BLOCKED.some((p) => specifier === p || specifier.startsWith(p + "/"))) {
    throw Object.assign(new Error("Cannot find package '" + specifier + "' imported from " + context.parentURL), { code: "ERR_MODULE_NOT_FOUND" });
  }
  return next(specifier, context);
}`;
    const child = `import { register } from "node:module";
register("data:text/javascript," + encodeURIComponent(${JSON.stringify(hooks)}));
const { register: tsx } = await import("tsx/esm/api");
tsx();
const outcome = async (f) => { try { await f(); return "ok"; } catch (err) { return (err.code ?? "") + " " + err.message; } };
const result = {
  engineItself: await outcome(() => import("node-llama-cpp")),
  engineModule: await outcome(() => import("./edge-agent/engines/llamacpp.ts")),
  serve: await outcome(() => import("./cli/serve.ts")),
  edgeAgentCommand: await outcome(() => import("./edge-agent/main.ts")),
};
const { DEFAULT_FACTORIES } = await import("./edge-agent/main.ts");
const engine = DEFAULT_FACTORIES.llamacpp();
result.load = await outcome(() => engine.load({ id: "m", engine: "llamacpp", source: "/nonexistent.gguf" }));
result.kind = engine.kind;
await engine.close();
console.log(JSON.stringify(result));`;
    const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", child], { cwd: REPO, timeout: 60_000 });
    const result = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Record<string, string>;
    // The block works: the package and a module importing it at the top both fail to load.
    assert.match(result["engineItself"] ?? "", /^ERR_MODULE_NOT_FOUND/);
    assert.match(result["engineModule"] ?? "", /^ERR_MODULE_NOT_FOUND .*node-llama-cpp/);
    assert.equal(result["serve"], "ok", "cli/serve.ts (serve, extproc, xds) must not import an engine at the top");
    assert.equal(result["edgeAgentCommand"], "ok", "edge-agent/main.ts must load its engines lazily");
    assert.equal(result["kind"], "llamacpp");
    assert.match(result["load"] ?? "", /^unavailable the llamacpp engine needs the package node-llama-cpp, which this install left out .*npm ci/);
  });
});
