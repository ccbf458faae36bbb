/**
 * The vector index on a worker thread (`index-worker.ts`): this main-thread side keeps the id ↔
 * key maps, batches adds and removes made in one tick into one message, and matches replies to
 * searches by request id. A crashed worker never fails a request: searches in flight answer
 * `[]`, a new worker starts (after a second if the last one died within a second of starting),
 * and the `onReset` listeners re-add their entries to it.
 */
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import type { Logger } from "../../../common/telemetry/logger.ts";
import type { FromWorker, IndexOp, ToWorker, WorkerData } from "./index-protocol.ts";
import type { IndexHit, VectorIndex, VectorIndexOptions, VectorIndexStats } from "./vector-index.ts";

const WORKER_URL = new URL("./index-worker-boot.mjs", import.meta.url);
const RESTART_BACKOFF_MS = 1_000;

export interface WorkerIndexOptions extends VectorIndexOptions {
  logger: Logger;
  /** Called with the time of each usearch search inside the worker, µs (metrics, the speed bench). */
  observeSearch?: (micros: number) => void;
}

type Reply = Exclude<FromWorker, { type: "failed" }>;

export class WorkerIndex implements VectorIndex {
  readonly dimensions: number;
  private readonly options: Required<VectorIndexOptions>;
  private readonly logger: Logger;
  private readonly observeSearch: ((micros: number) => void) | undefined;
  private worker: Worker | undefined;
  private readonly ids = new Map<string, { key: number; scope: string }>();
  private readonly byKey = new Map<number, string>();
  private nextKey = 1;
  private ops: IndexOp[] = [];
  private vectors: Float32Array[] = [];
  private flushQueued = false;
  private readonly waiting = new Map<number, (reply: Reply | undefined) => void>();
  private nextRequest = 1;
  private readonly resetListeners: (() => void)[] = [];
  private restarts = 0;
  private startedAt = 0;
  private closed = false;

  constructor(options: WorkerIndexOptions) {
    this.dimensions = options.dimensions;
    this.logger = options.logger;
    this.observeSearch = options.observeSearch;
    this.options = {
      dimensions: options.dimensions,
      quantization: options.quantization ?? "i8",
      connectivity: options.connectivity ?? 16,
      expansionAdd: options.expansionAdd ?? 128,
      expansionSearch: options.expansionSearch ?? 64,
      addThreads: Math.min(options.addThreads ?? 1, availableParallelism()),
    };
    this.start();
  }

  get size(): number {
    return this.ids.size;
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(scope: string, id: string, vector: Float32Array): void {
    // While no worker runs, the restart's reset listeners re-add everything.
    if (!this.worker || this.ids.has(id)) return;
    if (vector.length !== this.dimensions) {
      this.logger.warn({ id, dimensions: vector.length, expected: this.dimensions }, "vector index: wrong dimensions; not indexed");
      return;
    }
    const key = this.nextKey++;
    this.ids.set(id, { key, scope });
    this.byKey.set(key, id);
    this.ops.push({ op: "add", scope, key });
    this.vectors.push(vector);
    this.queueFlush();
  }

  remove(id: string): void {
    const held = this.ids.get(id);
    if (!held) return;
    this.ids.delete(id);
    this.byKey.delete(held.key);
    this.ops.push({ op: "remove", scope: held.scope, key: held.key });
    this.queueFlush();
  }

  async search(scope: string, vector: Float32Array, k: number): Promise<IndexHit[]> {
    if (vector.length !== this.dimensions || k < 1) return [];
    const reply = await this.request((id) => ({ type: "search", id, scope, vector, k }));
    if (reply?.type !== "found") return [];
    this.observeSearch?.(reply.micros);
    const hits: IndexHit[] = [];
    for (let i = 0; i < reply.keys.length; i++) {
      const id = this.byKey.get(reply.keys[i]!);
      // A key removed after the search was sent is no longer an answer.
      if (id !== undefined) hits.push({ id, similarity: 1 - reply.distances[i]! });
    }
    return hits;
  }

  async flush(): Promise<void> {
    await this.request((id) => ({ type: "sync", id }));
  }

  onReset(listener: () => void): void {
    this.resetListeners.push(listener);
  }

  async stats(): Promise<VectorIndexStats> {
    const reply = await this.request((id) => ({ type: "stats", id }));
    if (reply?.type !== "stats") return { size: 0, scopes: 0, capacity: 0, compactions: 0, workerHeapBytes: 0, restarts: this.restarts };
    return {
      size: reply.size,
      scopes: reply.scopes,
      capacity: reply.capacity,
      compactions: reply.compactions,
      workerHeapBytes: reply.heapBytes,
      restarts: this.restarts,
    };
  }

  /** Makes the worker throw an uncaught error, as a bug in it would (tests of the recovery). */
  injectCrash(): void {
    this.post({ type: "crash" });
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.lost();
    if (worker) await worker.terminate();
  }

  private start(): void {
    const workerData: WorkerData = { options: this.options };
    // No execArgv: the boot file registers tsx itself, and the parent's flags (`--test`, …) are not the worker's.
    const worker = new Worker(WORKER_URL, { workerData, execArgv: [] });
    this.worker = worker;
    this.startedAt = Date.now();
    worker.on("message", (message: FromWorker) => this.receive(message));
    worker.on("error", (err: Error) => this.logger.error({ err: err.message }, "vector index: worker failed"));
    worker.on("exit", (code: number) => {
      if (this.worker !== worker || this.closed) return;
      this.logger.error({ code }, "vector index: worker exited; restarting it empty");
      this.lost();
      this.restarts++;
      const delay = Date.now() - this.startedAt < RESTART_BACKOFF_MS ? RESTART_BACKOFF_MS : 0;
      setTimeout(() => this.restart(), delay).unref();
    });
  }

  private restart(): void {
    if (this.closed) return;
    this.start();
    for (const listener of this.resetListeners) {
      try {
        listener();
      } catch (err) {
        this.logger.error({ err: (err as Error).message }, "vector index: a reset listener failed");
      }
    }
  }

  /** The worker is gone: everything it held and everything awaiting it is lost. */
  private lost(): void {
    this.worker = undefined;
    this.ids.clear();
    this.byKey.clear();
    this.ops = [];
    this.vectors = [];
    for (const resolve of this.waiting.values()) resolve(undefined);
    this.waiting.clear();
  }

  private receive(message: FromWorker): void {
    if (message.type === "failed") {
      this.logger.warn({ err: message.message }, "vector index: worker could not serve a request");
      if (message.id !== undefined) this.settle(message.id, undefined);
      return;
    }
    this.settle(message.id, message);
  }

  private settle(id: number, reply: Reply | undefined): void {
    const resolve = this.waiting.get(id);
    this.waiting.delete(id);
    resolve?.(reply);
  }

  /** Sends pending ops, then the request; resolves `undefined` if the worker is gone or failed it. */
  private request(make: (id: number) => ToWorker): Promise<Reply | undefined> {
    if (!this.worker) return Promise.resolve(undefined);
    const id = this.nextRequest++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.post(make(id));
    });
  }

  private queueFlush(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    queueMicrotask(() => {
      this.flushQueued = false;
      this.sendOps();
    });
  }

  private sendOps(): void {
    if (this.ops.length === 0 || !this.worker) return;
    const packed = new Float32Array(this.vectors.length * this.dimensions);
    this.vectors.forEach((vector, i) => packed.set(vector, i * this.dimensions));
    const message: ToWorker = { type: "ops", ops: this.ops, vectors: packed };
    this.ops = [];
    this.vectors = [];
    this.worker.postMessage(message, [packed.buffer]);
  }

  private post(message: ToWorker): void {
    this.sendOps();
    this.worker?.postMessage(message);
  }
}
