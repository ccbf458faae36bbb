/**
 * The shared semantic-store suite: every implementation runs it (`memory-semantic-store.test.ts`,
 * `redis-semantic-store.test.ts`). The harness hands over the store and the `WorkerIndex` it
 * owns, so the tests can check that the index follows the entries and can crash its worker.
 * `advance` moves the store's clock (fake for memory, real for Redis).
 *
 * Skips: `eviction` (LRU by max_bytes / max_entries) is the memory store's; the Redis store is
 * bounded by entry TTLs and Redis's own `maxmemory` policy, so it passes no such limits.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { WorkerIndex } from "./index-client.ts";
import type { SemanticEntry, SemanticStore } from "./semantic-store.ts";
import { entryBytes } from "./store-vector.ts";

export const DIMENSIONS = 8;

export interface SemanticStoreHarness {
  store: SemanticStore;
  index: WorkerIndex;
  now: () => number;
  advance: (ms: number) => Promise<void>;
  close: () => Promise<void>;
}

export interface HarnessLimits {
  maxBytes?: number;
  maxEntries?: number;
}

export interface SuiteSkips {
  /** Why eviction by max_bytes / max_entries does not apply, if it does not. */
  eviction?: string;
}

/** A unit vector at similarity `cos` to `axis(i)`, leaning towards `axis(j)`. */
export function toward(i: number, cos: number, j = (i + 1) % DIMENSIONS): Float32Array {
  const v = new Float32Array(DIMENSIONS);
  v[i] = cos;
  v[j] = Math.sqrt(1 - cos * cos);
  return v;
}

export function axis(i: number): Float32Array {
  return toward(i, 1);
}

export function entry(h: { now: () => number }, scope: string, vector: Float32Array, fields: Partial<SemanticEntry> = {}): SemanticEntry {
  const now = h.now();
  return {
    id: randomUUID(),
    tenant: "acme",
    scope,
    vector,
    question: "what is the capital of France?",
    completion: '{"id":"chatcmpl-1","choices":[{"message":{"role":"assistant","content":"Paris."}}]}',
    createdAt: now,
    expiresAt: now + 60_000,
    ...fields,
  };
}

/** Polls `probe` until `ok` holds or `timeoutMs` passes; returns the last value seen. */
export async function eventually<T>(probe: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await probe();
  while (!ok(value) && Date.now() < deadline) {
    await sleep(25);
    value = await probe();
  }
  return value;
}

async function ids(store: SemanticStore, scope: string, vector: Float32Array, k = 5, min = -1): Promise<string[]> {
  return (await store.nearest(scope, vector, k, min)).map((m) => m.entry.id);
}

export function semanticStoreCases(name: string, make: (limits?: HarnessLimits) => Promise<SemanticStoreHarness>, skips: SuiteSkips = {}): void {
  const withStore = (title: string, body: (h: SemanticStoreHarness) => Promise<void>, limits?: HarnessLimits, skip?: string): void => {
    test(`${name}: ${title}`, skip ? { skip } : {}, async () => {
      const h = await make(limits);
      try {
        await body(h);
      } finally {
        await h.close();
      }
    });
  };

  withStore("nearest answers best first, at most k, with exact cosine similarity and the whole entry", async (h) => {
    const a = entry(h, "s", axis(0));
    const b = entry(h, "s", toward(0, 0.9));
    const c = entry(h, "s", toward(0, 0.5));
    const far = entry(h, "s", axis(3));
    for (const e of [c, far, a, b]) await h.store.insert(e);
    const matches = await h.store.nearest("s", axis(0), 3, 0.1);
    assert.deepEqual(
      matches.map((m) => m.entry.id),
      [a.id, b.id, c.id],
    );
    matches.forEach((m, i) => assert.ok(Math.abs(m.similarity - [1, 0.9, 0.5][i]!) < 1e-5, `similarity ${m.similarity}`));
    assert.deepEqual(matches[0]!.entry, a);
    assert.deepEqual(await ids(h.store, "s", axis(0), 2), [a.id, b.id]);
  });

  withStore("only matches at or above the minimum similarity", async (h) => {
    const a = entry(h, "s", axis(0));
    const b = entry(h, "s", toward(0, 0.9));
    await h.store.insert(a);
    await h.store.insert(b);
    assert.deepEqual(await ids(h.store, "s", axis(0), 5, 0.95), [a.id]);
    assert.deepEqual(await ids(h.store, "s", toward(0, 0.9), 5, 0.999), [b.id]);
    assert.deepEqual(await ids(h.store, "s", axis(4), 5, 0.5), []);
  });

  withStore("matches never cross scopes: the same vector in another scope is no match", async (h) => {
    const x = entry(h, "scope-1", axis(0));
    await h.store.insert(x);
    assert.deepEqual(await ids(h.store, "scope-2", axis(0)), []);
    const y = entry(h, "scope-2", axis(0), { tenant: "other" });
    await h.store.insert(y);
    assert.deepEqual(await ids(h.store, "scope-2", axis(0)), [y.id]);
    assert.deepEqual(await ids(h.store, "scope-1", axis(0)), [x.id]);
  });

  withStore("an entry past its expiry is gone, from the store and from the index", async (h) => {
    const short = entry(h, "s", axis(0), { expiresAt: h.now() + 1_000 });
    const long = entry(h, "s", toward(0, 0.8));
    await h.store.insert(short);
    await h.store.insert(long);
    assert.deepEqual(await ids(h.store, "s", axis(0)), [short.id, long.id]);
    await h.advance(1_300);
    assert.deepEqual(await ids(h.store, "s", axis(0)), [long.id]);
    assert.equal(h.index.has(short.id), false);
    assert.deepEqual(h.store.stats(), { entries: 1, bytes: entryBytes(long) });
    await h.index.flush();
    assert.equal((await h.index.stats()).size, 1, "the worker holds one vector");
  });

  withStore("an entry already expired is not stored", async (h) => {
    await h.store.insert(entry(h, "s", axis(0), { expiresAt: h.now() - 1 }));
    assert.deepEqual(await ids(h.store, "s", axis(0)), []);
    assert.deepEqual(h.store.stats(), { entries: 0, bytes: 0 });
  });

  withStore("delete removes the entry from the store and the index", async (h) => {
    const a = entry(h, "s", axis(0));
    const b = entry(h, "s", toward(0, 0.7));
    await h.store.insert(a);
    await h.store.insert(b);
    await h.store.delete(a.id);
    await h.store.delete("never-stored");
    assert.deepEqual(await ids(h.store, "s", axis(0)), [b.id]);
    assert.equal(h.index.has(a.id), false);
    assert.deepEqual(h.store.stats(), { entries: 1, bytes: entryBytes(b) });
  });

  withStore("a vector of the wrong length is neither stored nor searched; nothing rejects", async (h) => {
    await h.store.insert(entry(h, "s", new Float32Array(DIMENSIONS + 1).fill(0.1)));
    assert.deepEqual(h.store.stats(), { entries: 0, bytes: 0 });
    assert.deepEqual(await h.store.nearest("s", new Float32Array(3), 5, 0), []);
  });

  withStore(
    "past max_entries the least recently used entry goes, from the store and the index",
    async (h) => {
      const [a, b, c, d] = [0, 1, 2, 3].map((i) => entry(h, "s", axis(i)));
      for (const e of [a!, b!, c!]) await h.store.insert(e);
      assert.deepEqual(await ids(h.store, "s", axis(0), 1, 0.99), [a!.id], "a read: now the most recent");
      await h.store.insert(d!);
      assert.deepEqual(await ids(h.store, "s", axis(1), 5, 0.99), [], "b was the least recently used");
      assert.equal(h.index.has(b!.id), false);
      for (const e of [a!, c!, d!]) assert.ok(h.index.has(e.id), "the others are indexed");
      assert.deepEqual(h.store.stats(), { entries: 3, bytes: 3 * entryBytes(a!) });
      await h.index.flush();
      assert.equal((await h.index.stats()).size, 3, "the worker agrees");
    },
    { maxEntries: 3 },
    skips.eviction,
  );

  const size = entryBytes(entry({ now: () => 0 }, "s", axis(0)));
  withStore(
    "past max_bytes the least recently used entries go until the rest fit",
    async (h) => {
      const [a, b, c, d] = [0, 1, 2, 3].map((i) => entry(h, "s", axis(i)));
      for (const e of [a!, b!, c!]) await h.store.insert(e);
      assert.deepEqual(await ids(h.store, "s", axis(0), 1, 0.99), [a!.id]);
      await h.store.insert(d!);
      assert.deepEqual(h.store.stats(), { entries: 3, bytes: 3 * size });
      assert.equal(h.index.has(b!.id), false);
      assert.deepEqual(await ids(h.store, "s", axis(1), 5, 0.99), []);
      const big = entry(h, "s", axis(5), { completion: "x".repeat(3 * size) });
      await h.store.insert(big);
      assert.deepEqual(h.store.stats(), { entries: 3, bytes: 3 * size }, "an entry larger than the store is not stored and evicts nothing");
      assert.equal(h.index.has(big.id), false);
    },
    { maxBytes: Math.floor(3.5 * size) },
    skips.eviction,
  );

  withStore("a crashed index worker: no match meanwhile, then the entries are found again", async (h) => {
    const a = entry(h, "s", axis(0));
    await h.store.insert(a);
    h.index.injectCrash();
    assert.deepEqual(await ids(h.store, "s", axis(0)), [], "the crash answers no match");
    const found = await eventually(
      () => ids(h.store, "s", axis(0)),
      (got) => got.length === 1,
    );
    assert.deepEqual(found, [a.id]);
    const stats = await h.index.stats();
    assert.equal(stats.restarts, 1);
    assert.equal(stats.size, 1);
    const b = entry(h, "s", toward(0, 0.9));
    await h.store.insert(b);
    assert.deepEqual(await ids(h.store, "s", axis(0)), [a.id, b.id], "inserts work after the restart");
  });
}
