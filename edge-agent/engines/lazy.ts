/**
 * Engines loaded on first use. The engines' packages (node-llama-cpp, onnxruntime-node, ollama)
 * belong to the edge agent's workspace (`edge-agent/package.json`) and a gateway-only install
 * (`npm ci --workspaces=false`, the ext_proc image) leaves them out; so nothing the gateway loads
 * may import them at the top. An engine here imports its module when it loads its first model,
 * and a missing package is an `EngineError` that says how to install it, not a crash at start.
 */
import { EngineError, type Engine, type EngineKind, type LoadedModel, type ModelSpec } from "./engine.ts";

/** The package each engine's module needs, for the message when it is not installed. */
export const ENGINE_PACKAGES: Record<EngineKind, string> = {
  llamacpp: "node-llama-cpp",
  ollama: "ollama",
  onnx: "onnxruntime-node",
};

const missingPackage = (err: unknown, pkg: string): boolean =>
  err instanceof Error && (err as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND" && err.message.includes(`'${pkg}'`);

/** An `Engine` whose implementation is `create()`d (and its module imported) on the first `load`. */
export function lazyEngine(kind: EngineKind, create: () => Promise<Engine>): Engine {
  let engine: Promise<Engine> | undefined;
  const get = (): Promise<Engine> => {
    engine ??= create().catch((err: unknown) => {
      engine = undefined;
      const pkg = ENGINE_PACKAGES[kind];
      if (!missingPackage(err, pkg)) throw err;
      throw new EngineError(
        `the ${kind} engine needs the package ${pkg}, which this install left out (a gateway-only install): run 'npm ci' at the repository root, or use the edge-agent image`,
        "unavailable",
        { cause: err },
      );
    });
    return engine;
  };
  return {
    kind,
    load: async (spec: ModelSpec): Promise<LoadedModel> => (await get()).load(spec),
    close: async (): Promise<void> => {
      const started = engine;
      engine = undefined;
      if (started) await (await started.catch(() => undefined))?.close();
    },
  };
}
