/**
 * Policy plugins: ES modules that may override the built-in decision. A plugin module exports
 *
 *   export function decide(ctx: PluginContext): PluginVerdict | undefined | Promise<PluginVerdict | undefined>
 *
 * and is loaded once at start (`loadPlugins`), by dynamic `import()` of its file URL (`.mjs`/`.js`;
 * `.ts` when Gearbox runs under tsx). Per request, `decideWithPlugins` runs the built-in
 * `decidePolicy`, then each plugin in order, each seeing the decision so far; a verdict replaces
 * it, `undefined` keeps it. A plugin that throws, returns something that is not a verdict, or
 * takes longer than its `timeoutMs` (default 5 ms) is skipped: the decision so far stands, with
 * `;plugin_error:<name>` appended to its reason, and the plugin's error counter goes up. A plugin
 * that blocks the event loop cannot be interrupted; its late verdict is discarded all the same.
 */
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { fail, ok, type Result } from "../../../common/result.ts";
import { decidePolicy, guardEdgeAvailability } from "./decide.ts";
import type { PluginSpec, PolicyConfig, PolicyDecision, PolicyInput, RouteTarget } from "./types.ts";

export interface PluginContext extends Readonly<PolicyInput> {
  /** The decision so far: the built-in one, or the previous plugin's verdict. */
  readonly decision: Readonly<PolicyDecision>;
}

export interface PluginVerdict {
  target: RouteTarget;
  /** Printable ASCII, at most 128 characters; it ends up in `x-gearbox-reason` as `plugin:<name>:<reason>`. */
  reason: string;
}

export type PluginDecide = (ctx: PluginContext) => PluginVerdict | undefined | Promise<PluginVerdict | undefined>;

export interface PluginStats {
  calls: number;
  overrides: number;
  errors: number;
  timeouts: number;
  lastError?: string;
}

export interface PolicyPlugin {
  readonly name: string;
  readonly timeoutMs: number;
  readonly decide: PluginDecide;
  /** Mutable counters, read by metrics. */
  readonly stats: PluginStats;
}

export function createPlugin(name: string, decide: PluginDecide, timeoutMs = 5): PolicyPlugin {
  return { name, timeoutMs, decide, stats: { calls: 0, overrides: 0, errors: 0, timeouts: 0 } };
}

/** Imports one plugin module; `baseDir` resolves a relative `module` (the config file's folder). */
export async function loadPlugin(spec: PluginSpec, baseDir: string = process.cwd()): Promise<Result<PolicyPlugin>> {
  const path = isAbsolute(spec.module) ? spec.module : resolve(baseDir, spec.module);
  let mod: unknown;
  try {
    mod = await import(pathToFileURL(path).href);
  } catch (error) {
    return fail(`route.plugins.${spec.name}: cannot load '${path}': ${error instanceof Error ? error.message : String(error)}`);
  }
  const decide: unknown = typeof mod === "object" && mod !== null ? (mod as Record<string, unknown>).decide : undefined;
  if (typeof decide !== "function") return fail(`route.plugins.${spec.name}: '${path}' does not export a function 'decide'`);
  return ok(createPlugin(spec.name, decide as PluginDecide, spec.timeoutMs));
}

export async function loadPlugins(specs: readonly PluginSpec[], baseDir?: string): Promise<Result<PolicyPlugin[]>> {
  const results = await Promise.all(specs.map((spec) => loadPlugin(spec, baseDir)));
  const errors = results.flatMap((r) => (r.ok ? [] : r.errors));
  return errors.length > 0 ? fail(...errors) : ok(results.flatMap((r) => (r.ok ? [r.value] : [])));
}

const REASON = /^[\x20-\x7e]{1,128}$/;

function isVerdict(value: unknown): value is PluginVerdict {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return (v.target === "edge" || v.target === "cloud") && typeof v.reason === "string" && REASON.test(v.reason);
}

class PluginTimeout extends Error {}

type Outcome = { kind: "verdict"; verdict: PluginVerdict } | { kind: "keep" } | { kind: "error"; message: string; timeout: boolean };

async function runPlugin(plugin: PolicyPlugin, ctx: PluginContext): Promise<Outcome> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const returned = plugin.decide(ctx);
    const value: unknown =
      returned instanceof Promise
        ? await Promise.race([
            returned,
            new Promise<never>((_, reject) => {
              timer = setTimeout(() => reject(new PluginTimeout(`timed out after ${plugin.timeoutMs} ms`)), plugin.timeoutMs);
            }),
          ])
        : returned;
    const elapsed = performance.now() - started;
    if (elapsed > plugin.timeoutMs) return { kind: "error", message: `took ${elapsed.toFixed(1)} ms, budget ${plugin.timeoutMs} ms`, timeout: true };
    if (value === undefined) return { kind: "keep" };
    if (!isVerdict(value)) return { kind: "error", message: "returned something that is not { target: 'edge'|'cloud', reason }", timeout: false };
    return { kind: "verdict", verdict: value };
  } catch (error) {
    return { kind: "error", message: error instanceof Error ? error.message : String(error), timeout: error instanceof PluginTimeout };
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/** The built-in decision, then each plugin in order; never rejects. */
export async function decideWithPlugins(input: PolicyInput, config: PolicyConfig, plugins: readonly PolicyPlugin[]): Promise<PolicyDecision> {
  let decision = decidePolicy(input, config);
  for (const plugin of plugins) {
    plugin.stats.calls++;
    const outcome = await runPlugin(plugin, { ...input, decision });
    switch (outcome.kind) {
      case "keep":
        break;
      case "verdict":
        plugin.stats.overrides++;
        decision = guardEdgeAvailability({ target: outcome.verdict.target, reason: `plugin:${plugin.name}:${outcome.verdict.reason}`, layer: "plugin" }, input);
        break;
      case "error":
        plugin.stats.errors++;
        if (outcome.timeout) plugin.stats.timeouts++;
        plugin.stats.lastError = outcome.message;
        decision = { ...decision, reason: `${decision.reason};plugin_error:${plugin.name}` };
        break;
      default:
        return outcome satisfies never;
    }
  }
  return decision;
}
