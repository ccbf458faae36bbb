/**
 * Messages between the index client (`index-client.ts`, main thread) and its worker
 * (`index-worker.ts`). Keys are the client's numbers for ids (usearch keys are integers); the
 * worker never sees ids.
 */
import type { VectorIndexOptions } from "./vector-index.ts";

/** One add or remove, in call order; an add's vector is the next `dimensions` values of `vectors`. */
export type IndexOp = { op: "add"; scope: string; key: number } | { op: "remove"; scope: string; key: number };

export type ToWorker =
  | { type: "ops"; ops: IndexOp[]; vectors: Float32Array }
  | { type: "search"; id: number; scope: string; vector: Float32Array; k: number }
  | { type: "sync"; id: number }
  | { type: "stats"; id: number }
  /** A fault for tests: the worker throws outside any handler, as a bug would. */
  | { type: "crash" };

export type FromWorker =
  /** `micros`: the usearch search alone, timed in the worker. */
  | { type: "found"; id: number; keys: number[]; distances: number[]; micros: number }
  | { type: "synced"; id: number }
  | { type: "stats"; id: number; scopes: number; size: number; capacity: number; compactions: number; heapBytes: number }
  /** A request the worker could not serve (`id`), or a batch op that failed (no `id`). */
  | { type: "failed"; id?: number; message: string };

export interface WorkerData {
  options: Required<VectorIndexOptions>;
}
