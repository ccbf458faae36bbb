import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { complexityLevel } from "../complexity.ts";
import { policyConfigFrom } from "./config.ts";
import { createPlugin, decideWithPlugins, loadPlugin, loadPlugins, type PolicyPlugin } from "./plugins.ts";
import type { PolicyInput } from "./types.ts";

const CONFIG = policyConfigFrom({
  rules: [{ when: { intent: ["summarize"], estimated_complexity: "low" }, target: "edge" }],
});

function input(over: Partial<PolicyInput> = {}): PolicyInput {
  return {
    intent: "summarize",
    intentConfidence: 0.9,
    complexity: { score: 0.1, level: complexityLevel(0.1) },
    hasTools: false,
    clientRoute: "auto",
    model: "m",
    edgeAvailable: true,
    ...over,
  };
}

const FILES: Record<string, string> = {
  "tenant-cloud.mjs": `export function decide(ctx) {
  if (ctx.tenant === "acme") return { target: "cloud", reason: "tenant=acme" };
  return undefined;
}`,
  "throws.mjs": `export function decide() { throw new Error("boom"); }`,
  "hangs.mjs": `export function decide() { return new Promise(() => {}); }`,
  "garbage.mjs": `export function decide() { return { target: "moon", reason: 42 }; }`,
  "async-edge.ts": `import type { PluginContext, PluginVerdict } from ${JSON.stringify(new URL("./plugins.ts", import.meta.url).pathname)};
export async function decide(ctx: PluginContext): Promise<PluginVerdict | undefined> {
  await Promise.resolve();
  return ctx.decision.target === "cloud" ? { target: "edge", reason: "prefer-edge" } : undefined;
}`,
  "no-decide.mjs": `export const x = 1;`,
};

let dir = "";

async function load(name: string, timeoutMs = 100): Promise<PolicyPlugin> {
  const loaded = await loadPlugin({ name: name.replace(/\.\w+$/, ""), module: name, timeoutMs }, dir);
  assert.ok(loaded.ok, loaded.ok ? "" : loaded.errors.join("; "));
  return loaded.value;
}

describe("policy plugins", () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "gearbox-plugins-"));
    for (const [file, text] of Object.entries(FILES)) await writeFile(join(dir, file), text);
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test("a plugin forces cloud for one tenant and leaves the others alone", async () => {
    const plugin = await load("tenant-cloud.mjs");
    assert.deepEqual(await decideWithPlugins(input({ tenant: "acme" }), CONFIG, [plugin]), {
      target: "cloud",
      reason: "plugin:tenant-cloud:tenant=acme",
      layer: "plugin",
    });
    assert.deepEqual(await decideWithPlugins(input({ tenant: "other" }), CONFIG, [plugin]), { target: "edge", reason: "rule:1", layer: "rules" });
    assert.deepEqual(plugin.stats, { calls: 2, overrides: 1, errors: 0, timeouts: 0 });
  });

  test("a throwing plugin leaves the built-in decision, counted and named", async () => {
    const plugin = await load("throws.mjs");
    assert.deepEqual(await decideWithPlugins(input(), CONFIG, [plugin]), { target: "edge", reason: "rule:1;plugin_error:throws", layer: "rules" });
    assert.equal(plugin.stats.errors, 1);
    assert.equal(plugin.stats.lastError, "boom");
  });

  test("a hanging plugin times out after its budget", async () => {
    const plugin = await load("hangs.mjs", 5);
    const started = performance.now();
    const decision = await decideWithPlugins(input(), CONFIG, [plugin]);
    assert.ok(performance.now() - started < 500);
    assert.deepEqual(decision, { target: "edge", reason: "rule:1;plugin_error:hangs", layer: "rules" });
    assert.equal(plugin.stats.timeouts, 1);
  });

  test("a plugin returning garbage is an error, not a decision", async () => {
    const plugin = await load("garbage.mjs");
    assert.equal((await decideWithPlugins(input(), CONFIG, [plugin])).reason, "rule:1;plugin_error:garbage");
    assert.equal(plugin.stats.errors, 1);
    assert.equal(plugin.stats.timeouts, 0);
  });

  test("a typed async TypeScript plugin sees the decision so far; plugins chain in order", async () => {
    const [tenant, edge] = [await load("tenant-cloud.mjs"), await load("async-edge.ts")];
    assert.equal((await decideWithPlugins(input({ tenant: "acme" }), CONFIG, [tenant, edge])).reason, "plugin:async-edge:prefer-edge");
    assert.equal((await decideWithPlugins(input({ tenant: "acme" }), CONFIG, [edge, tenant])).reason, "plugin:tenant-cloud:tenant=acme");
  });

  test("a plugin's edge verdict without an edge agent becomes cloud", async () => {
    const edge = await load("async-edge.ts");
    assert.deepEqual(await decideWithPlugins(input({ intent: "math", complexity: { score: 0.9, level: "high" }, edgeAvailable: false }), CONFIG, [edge]), {
      target: "cloud",
      reason: "edge_unavailable;plugin:async-edge:prefer-edge",
      layer: "plugin",
    });
  });

  test("a synchronous plugin that blocks past its budget has its verdict discarded", async () => {
    const slow = createPlugin(
      "slow",
      () => {
        const end = performance.now() + 20;
        while (performance.now() < end);
        return { target: "cloud", reason: "late" };
      },
      5,
    );
    assert.equal((await decideWithPlugins(input(), CONFIG, [slow])).reason, "rule:1;plugin_error:slow");
    assert.equal(slow.stats.timeouts, 1);
  });

  test("loading fails clearly for a missing file or a module without decide", async () => {
    const missing = await loadPlugin({ name: "missing", module: "nope.mjs", timeoutMs: 5 }, dir);
    assert.equal(missing.ok, false);
    assert.match(missing.ok ? "" : (missing.errors[0] ?? ""), /route\.plugins\.missing: cannot load/);
    const all = await loadPlugins(
      [
        { name: "no-decide", module: "no-decide.mjs", timeoutMs: 5 },
        { name: "ok", module: join(dir, "throws.mjs"), timeoutMs: 5 },
      ],
      dir,
    );
    assert.equal(all.ok, false);
    assert.deepEqual(all.ok ? [] : all.errors.map((e) => e.split(":")[0]), ["route.plugins.no-decide"]);
  });
});
