/**
 * The models an edge agent has loaded, each with its engine and its capacity limits. Models
 * load and unload while the agent runs; a model being unloaded takes no new requests and is
 * released once its running ones finish.
 */
import { GatewayError } from "../extproc/errors.ts";
import { Capacity, type CapacityOptions } from "./capacity.ts";
import type { Engine, EngineKind, LoadedModel, ModelInfo, ModelSpec } from "./engines/engine.ts";

export type EngineFactories = Record<EngineKind, () => Engine>;

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
      throw new GatewayError(409, "invalid_request_error", `Model id '${spec.id}' is already loaded from ${existing.spec.source}; unload it first.`, { code: "model_exists" });
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
