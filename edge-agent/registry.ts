/**
 * The models an edge agent has loaded, each with its engine and its capacity limits. Models
 * load and unload while the agent runs; a model being unloaded takes no new requests and is
 * released once its running ones finish.
 */
import { GatewayError } from "../common/errors.ts";
import { Capacity, type CapacityOptions } from "./capacity.ts";
import type { Engine, EngineKind, LoadedModel, ModelInfo, ModelSpec } from "./engines/engine.ts";

export type EngineFactories = Record<EngineKind, () => Engine>;

/** What `reconcile` did, by model id. */
export interface ReconcileResult {
  loaded: string[];
  /** Loaded before with another spec: unloaded, then loaded with the new one. */
  reloaded: string[];
  unloaded: string[];
  kept: string[];
}

/** The same engine and load parameters (for one model id): reconciling leaves such a model alone. */
function sameSpec(a: ModelSpec, b: ModelSpec): boolean {
  return (
    a.engine === b.engine &&
    a.source === b.source &&
    a.threads === b.threads &&
    a.contextLength === b.contextLength &&
    a.tokenizer === b.tokenizer &&
    a.host === b.host
  );
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export interface ModelEntry {
  spec: ModelSpec;
  model: LoadedModel;
  capacity: Capacity;
  loadedAt: Date;
  loadMs: number;
}

export class ModelRegistry {
  private readonly engines = new Map<EngineKind, Engine>();
  private readonly models = new Map<string, ModelEntry>();
  private readonly loading = new Map<string, Promise<ModelEntry>>();

  constructor(
    private readonly factories: EngineFactories,
    private readonly capacity: CapacityOptions,
  ) {}

  /** Loads a model (idempotent for the same id while loading or loaded with the same source). */
  async load(spec: ModelSpec): Promise<ModelEntry> {
    const existing = this.models.get(spec.id);
    if (existing) {
      if (existing.spec.source === spec.source && existing.spec.engine === spec.engine) return existing;
      throw new GatewayError(409, "invalid_request_error", `Model id '${spec.id}' is already loaded from ${existing.spec.source}; unload it first.`, {
        code: "model_exists",
      });
    }
    const pending = this.loading.get(spec.id);
    if (pending) return pending;
    const started = performance.now();
    const promise = this.engine(spec.engine)
      .load(spec)
      .then((model) => {
        const entry: ModelEntry = { spec, model, capacity: new Capacity(spec.id, this.capacity), loadedAt: new Date(), loadMs: performance.now() - started };
        this.models.set(spec.id, entry);
        return entry;
      })
      .finally(() => this.loading.delete(spec.id));
    this.loading.set(spec.id, promise);
    return promise;
  }

  /**
   * Makes the loaded models exactly `specs` (ids unique): loads the missing ones, reloads those
   * whose spec changed, then unloads the rest; a model already loaded with the same spec is left
   * alone. When a load fails, what this call loaded or reloaded is put back as it was and the
   * error is thrown: the registry keeps its previous models.
   */
  async reconcile(specs: readonly ModelSpec[]): Promise<ReconcileResult> {
    const result: ReconcileResult = { loaded: [], reloaded: [], unloaded: [], kept: [] };
    const undo: (() => Promise<unknown>)[] = [];
    try {
      for (const spec of specs) {
        const current = this.models.get(spec.id);
        if (current && sameSpec(current.spec, spec)) {
          result.kept.push(spec.id);
          continue;
        }
        if (current) {
          await this.unload(spec.id);
          undo.push(() => this.load(current.spec));
        }
        await this.load(spec);
        undo.push(() => this.unload(spec.id));
        (current ? result.reloaded : result.loaded).push(spec.id);
      }
    } catch (err) {
      const failures: unknown[] = [];
      for (const step of undo.reverse()) await step().catch((e: unknown) => failures.push(e));
      if (failures.length === 0) throw err;
      throw new AggregateError([err, ...failures], `${messageOf(err)} (restoring the previous models failed too: ${failures.map(messageOf).join("; ")})`);
    }
    const wanted = new Set(specs.map((s) => s.id));
    const failures: unknown[] = [];
    for (const id of [...this.models.keys()]) {
      if (wanted.has(id)) continue;
      await this.unload(id).catch((e: unknown) => failures.push(e));
      result.unloaded.push(id);
    }
    if (failures.length > 0) throw new AggregateError(failures, `unloading failed: ${failures.map(messageOf).join("; ")}`);
    return result;
  }

  /** Whether this registry has an engine of that kind (assignments arrive as plain strings). */
  hasEngine(kind: string): kind is EngineKind {
    return Object.hasOwn(this.factories, kind);
  }

  async unload(id: string): Promise<boolean> {
    const entry = this.models.get(id);
    if (!entry) return false;
    this.models.delete(id);
    await entry.model.unload();
    return true;
  }

  /** The model for a request, or a 404 naming what is loaded. */
  get(id: string): ModelEntry {
    const entry = this.models.get(id);
    if (entry) return entry;
    const have = [...this.models.keys()];
    throw new GatewayError(404, "not_found_error", `The model '${id}' is not loaded on this edge agent${have.length ? ` (loaded: ${have.join(", ")})` : ""}.`, {
      param: "model",
      code: "model_not_found",
    });
  }

  list(): ModelInfo[] {
    return [...this.models.values()].map((e) => e.model.info());
  }

  entries(): ModelEntry[] {
    return [...this.models.values()];
  }

  /** Requests running and queued across every loaded model (what the agent reports to the control plane). */
  busy(): { inFlight: number; queued: number } {
    let inFlight = 0;
    let queued = 0;
    for (const e of this.models.values()) {
      inFlight += e.capacity.inflight;
      queued += e.capacity.queued;
    }
    return { inFlight, queued };
  }

  get size(): number {
    return this.models.size;
  }

  async close(): Promise<void> {
    for (const id of [...this.models.keys()]) await this.unload(id);
    for (const engine of this.engines.values()) await engine.close();
    this.engines.clear();
  }

  private engine(kind: EngineKind): Engine {
    let engine = this.engines.get(kind);
    if (!engine) {
      engine = this.factories[kind]();
      this.engines.set(kind, engine);
    }
    return engine;
  }
}
