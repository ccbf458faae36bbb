/**
 * The models a device holds and the one its local answers use, changed by the gateway's
 * commands: `load` (a new handle from the factory, loaded), `unload`, `switch` (the active model;
 * loaded first when it is not). What it reports in the hello and in acks is `list()`.
 */
import { createModelHandle, type EngineName, type ModelHandle, type ModelSpec } from "./model-handle.ts";

export interface Command {
  id: number;
  op: "load" | "unload" | "switch";
  model: string;
  engine?: string;
  source?: string;
}

export class DeviceModels {
  private readonly handles = new Map<string, ModelHandle>();
  private activeId: string | undefined;

  constructor(
    handles: ModelHandle[] = [],
    private readonly factory: (spec: ModelSpec) => ModelHandle = (spec) => createModelHandle(spec),
  ) {
    for (const h of handles) this.handles.set(h.spec.id, h);
    this.activeId = handles[0]?.spec.id;
  }

  get active(): ModelHandle | undefined {
    return this.activeId === undefined ? undefined : this.handles.get(this.activeId);
  }

  get(id: string): ModelHandle | undefined {
    return this.handles.get(id);
  }

  /** The engines this device can run. */
  engines(): EngineName[] {
    return ["llama.cpp", "ollama"];
  }

  /** Loaded models, as the channel reports them. */
  list(): { id: string; engine: string; source: string }[] {
    return [...this.handles.values()].filter((h) => h.loaded).map((h) => ({ id: h.spec.id, engine: h.engine, source: h.spec.source }));
  }

  get activeModel(): string | undefined {
    return this.activeId;
  }

  /** Loads every handle not loaded yet (before the first hello). */
  async loadAll(): Promise<void> {
    for (const h of this.handles.values()) await h.load();
  }

  /** Applies a command; throws (the ack says why) when it cannot. */
  async apply(c: Command): Promise<void> {
    switch (c.op) {
      case "load": {
        let h = this.handles.get(c.model);
        if (!h) {
          if (c.engine !== "llama.cpp" && c.engine !== "ollama")
            throw new Error(`load ${c.model}: engine must be llama.cpp or ollama, got '${c.engine ?? ""}'`);
          if (!c.source) throw new Error(`load ${c.model}: a source is required`);
          h = this.factory({ id: c.model, engine: c.engine, source: c.source });
          this.handles.set(c.model, h);
        }
        await h.load();
        this.activeId ??= c.model;
        return;
      }
      case "unload": {
        const h = this.handles.get(c.model);
        if (!h) throw new Error(`unload ${c.model}: not held`);
        await h.close();
        this.handles.delete(c.model);
        if (this.activeId === c.model) this.activeId = [...this.handles.keys()][0];
        return;
      }
      case "switch": {
        const h = this.handles.get(c.model);
        if (!h) throw new Error(`switch ${c.model}: not held (load it first)`);
        await h.load();
        this.activeId = c.model;
        return;
      }
      default: {
        const never: never = c.op;
        throw new Error(`unknown command op '${String(never)}'`);
      }
    }
  }

  async close(): Promise<void> {
    for (const h of this.handles.values()) await h.close();
  }
}
