/**
 * `ModelRegistry.reconcile` on the real llama.cpp engine and the tiny GGUF: load what is
 * missing, reload what changed, unload the rest, leave the same alone; all or nothing on failure.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, beforeEach, test } from "node:test";
import { countingRegistry } from "../test/xds/registry-support.ts";
import type { ModelSpec } from "./engines/engine.ts";
import { tinyFixture, type TinyFixture } from "./engines/llamacpp-test-support.ts";
import type { ModelRegistry } from "./registry.ts";

let fixture: TinyFixture;
let registry: ModelRegistry;
let loads: string[];
let a: ModelSpec;
let b: ModelSpec;

before(async () => {
  fixture = await tinyFixture();
  a = { id: "a", engine: "llamacpp", source: fixture.file, threads: 1, contextLength: 256 };
  b = { id: "b", engine: "llamacpp", source: await fixture.write("b.gguf", { seed: 2 }), threads: 1, contextLength: 256 };
});
beforeEach(async () => {
  await registry?.close();
  ({ registry, loads } = countingRegistry(fixture));
});
after(async () => {
  await registry.close();
  await fixture.close();
});

const ids = () => registry.list().map((m) => m.id);

test("loads the missing, keeps the same (same object, not reloaded), reloads the changed, unloads the rest", async () => {
  assert.deepEqual(await registry.reconcile([a]), { loaded: ["a"], reloaded: [], unloaded: [], kept: [] });
  const first = registry.get("a").model;
  assert.deepEqual(await registry.reconcile([a, b]), { loaded: ["b"], reloaded: [], unloaded: [], kept: ["a"] });
  assert.equal(registry.get("a").model, first);
  assert.deepEqual(await registry.reconcile([{ ...b, contextLength: 128 }]), { loaded: [], reloaded: ["b"], unloaded: ["a"], kept: [] });
  assert.equal(registry.get("b").spec.contextLength, 128);
  assert.deepEqual(ids(), ["b"]);
  assert.deepEqual(loads, ["a", "b", "b"]);
  assert.deepEqual(await registry.reconcile([]), { loaded: [], reloaded: [], unloaded: ["b"], kept: [] });
  assert.equal(registry.size, 0);
});

test("a failed load puts back what the call loaded and throws; the previous models stay, unloaded nothing", async () => {
  await registry.reconcile([a]);
  const kept = registry.get("a").model;
  const missing = { id: "c", engine: "llamacpp" as const, source: path.join(fixture.dir, "missing.gguf"), threads: 1 };
  await assert.rejects(registry.reconcile([b, missing]), /missing\.gguf/);
  assert.deepEqual(ids(), ["a"], "b was loaded, then unloaded again; a (not in the assignment) was not unloaded");
  assert.equal(registry.get("a").model, kept);
  assert.deepEqual(loads, ["a", "b", "c"]);
});

test("a failed reload restores the model with its previous spec", async () => {
  await registry.reconcile([a]);
  await assert.rejects(registry.reconcile([{ ...a, source: path.join(fixture.dir, "missing.gguf") }]), /missing\.gguf/);
  assert.deepEqual(ids(), ["a"]);
  assert.equal(registry.get("a").spec.source, fixture.file);
  assert.deepEqual(loads, ["a", "a", "a"], "loaded, the failed reload, the restore");
});

test("hasEngine knows the registry's engine kinds only", () => {
  assert.equal(registry.hasEngine("llamacpp"), true);
  assert.equal(registry.hasEngine("onnx"), true);
  assert.equal(registry.hasEngine("tensorrt"), false);
  assert.equal(registry.hasEngine("toString"), false);
});
