/**
 * The vector-index worker thread: one usearch HNSW index per scope, created on the scope's first
 * add and dropped when its last key is removed, so a search can only return keys of its scope.
 * usearch's add and search are synchronous native calls (a search over a million vectors takes
 * a fraction of a millisecond, a batch of adds much longer); here they block this thread, not the
 * event loop that serves requests. usearch grows an index's capacity itself (to the next power of
 * two past size + batch) and reuses removed keys' slots.
 *
 * usearch 2.25.3 keeps removed keys as tombstones in its key→slot hash table, and only a growth
 * rehashes them away; once every slot of that table has been used, `remove` answers 0 for keys it
 * holds and can loop forever (`equal_range` probes for an empty slot that no longer exists). So
 * each scope counts the table slots its adds may have used since the last rehash, and before a
 * batch of adds would use the last free ones (without growing), it compacts the index: save to a
 * file and load it back, which rebuilds the table from the live keys. A compaction blocks this
 * thread for about the time to write and read the index (`bench/cache/semantic-speed.ts`).
 */
import { existsSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parentPort, threadId, workerData } from "node:worker_threads";
import { Index, MetricKind, type ScalarKind } from "usearch";
import type { FromWorker, IndexOp, ToWorker, WorkerData } from "./index-protocol.ts";

const { options } = workerData as WorkerData;
const port = parentPort;
if (!port) throw new Error("index-worker.ts runs as a worker thread");

interface Scope {
  index: Index;
  /** Upper bound on the key-table slots used since the table was last rebuilt (live keys + adds since). */
  touched: number;
}

const scopes = new Map<string, Scope>();
let compactions = 0;
const COMPACT_DIR = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();

function scopeOf(name: string): Scope {
  let scope = scopes.get(name);
  if (!scope) {
    const index = new Index({
      dimensions: options.dimensions,
      metric: MetricKind.Cos,
      quantization: options.quantization as ScalarKind,
      connectivity: options.connectivity,
      expansion_add: options.expansionAdd,
      expansion_search: options.expansionSearch,
      multi: false,
    });
    scope = { index, touched: 0 };
    scopes.set(name, scope);
  }
  return scope;
}

/** Key-table slots of an index of this capacity (usearch sizes the table so capacity = ⌊slots × 2/3⌋). */
function tableSlots(capacity: number): number {
  return Math.floor(capacity * 1.5);
}

/** Adds a batch, compacting first if the batch could use the key table's last free slots. */
function addBatch(scope: Scope, keys: BigUint64Array, vectors: Float32Array): void {
  const { index } = scope;
  const capacity = index.capacity();
  const grows = index.size() + keys.length >= capacity;
  if (!grows && scope.touched + keys.length >= tableSlots(capacity) - 1) compact(scope);
  index.add(keys, vectors, options.addThreads);
  // A growth rebuilds the table: only live keys remain in it.
  scope.touched = index.capacity() !== capacity ? index.size() : scope.touched + keys.length;
}

/** Rebuilds the key table without tombstones (save + load); a failure crashes the worker, whose restart re-adds everything. */
function compact(scope: Scope): void {
  const path = join(COMPACT_DIR, `gearbox-usearch-${process.pid}-${threadId}-${compactions}.idx`);
  try {
    scope.index.save(path);
    scope.index.load(path);
  } finally {
    if (existsSync(path)) unlinkSync(path);
  }
  scope.touched = scope.index.size();
  compactions++;
}

function reply(message: FromWorker): void {
  port!.postMessage(message);
}

/** Applies ops in order; runs of adds to one scope go to usearch as one batch. */
function apply(ops: IndexOp[], vectors: Float32Array): void {
  const d = options.dimensions;
  let vector = 0;
  for (let i = 0; i < ops.length;) {
    const op = ops[i]!;
    try {
      switch (op.op) {
        case "add": {
          let end = i + 1;
          while (end < ops.length && ops[end]!.op === "add" && ops[end]!.scope === op.scope) end++;
          const keys = new BigUint64Array(end - i);
          for (let j = i; j < end; j++) keys[j - i] = BigInt(ops[j]!.key);
          const batch = vectors.subarray(vector * d, (vector + keys.length) * d);
          vector += keys.length;
          i = end;
          addBatch(scopeOf(op.scope), keys, batch);
          break;
        }
        case "remove": {
          i++;
          const scope = scopes.get(op.scope);
          if (!scope) break;
          scope.index.remove(BigInt(op.key));
          if (scope.index.size() === 0) scopes.delete(op.scope);
          break;
        }
        default: {
          const unknown: never = op;
          throw new Error(`unknown index op ${JSON.stringify(unknown)}`);
        }
      }
    } catch (err) {
      reply({ type: "failed", message: `${op.op} in scope ${op.scope}: ${(err as Error).message}` });
    }
  }
}

function search(scope: string, vector: Float32Array, k: number): { keys: number[]; distances: number[]; micros: number } {
  const index = scopes.get(scope)?.index;
  if (!index || index.size() === 0) return { keys: [], distances: [], micros: 0 };
  const started = performance.now();
  const matches = index.search(vector, Math.min(k, index.size()), 1);
  const micros = (performance.now() - started) * 1000;
  return { keys: Array.from(matches.keys, Number), distances: Array.from(matches.distances), micros };
}

port.on("message", (message: ToWorker) => {
  switch (message.type) {
    case "ops":
      apply(message.ops, message.vectors);
      return;
    case "search":
      try {
        reply({ type: "found", id: message.id, ...search(message.scope, message.vector, message.k) });
      } catch (err) {
        reply({ type: "failed", id: message.id, message: `search: ${(err as Error).message}` });
      }
      return;
    case "sync":
      reply({ type: "synced", id: message.id });
      return;
    case "stats": {
      let size = 0;
      let capacity = 0;
      for (const { index } of scopes.values()) {
        size += index.size();
        capacity += index.capacity();
      }
      reply({ type: "stats", id: message.id, scopes: scopes.size, size, capacity, compactions, heapBytes: process.memoryUsage().heapUsed });
      return;
    }
    case "crash":
      throw new Error("index worker: fault injected by a test");
    default: {
      const unknown: never = message;
      throw new Error(`unknown message ${JSON.stringify(unknown)}`);
    }
  }
});
