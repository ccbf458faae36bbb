import assert from "node:assert/strict";
import { test } from "node:test";
import { MemoryTenantStore } from "../store/memory-tenant-store.ts";
import { KeyCache } from "./key-cache.ts";
import { generateKey } from "./keys.ts";

/** A store that counts its hash lookups. */
function counted() {
  const store = new MemoryTenantStore();
  const reads: string[] = [];
  const lookup = { keyByHash: (hash: string) => (reads.push(hash), store.keyByHash(hash)) };
  return { store, reads, lookup };
}

test("KeyCache: one store read per key per bound; a new read after it", async () => {
  const { store, reads, lookup } = counted();
  const { record } = generateKey({ role: "call", tenant: "a", name: "n", createdBy: "x" });
  await store.putKey(record);
  const clock = { now: 0 };
  const cache = new KeyCache(lookup, { ttlMs: 5_000, now: () => clock.now });
  assert.equal((await cache.lookup(record.hash))?.id, record.id);
  clock.now = 4_999;
  await cache.lookup(record.hash);
  assert.equal(reads.length, 1, "still within the bound");
  clock.now = 5_000;
  await cache.lookup(record.hash);
  assert.equal(reads.length, 2);
});

test("KeyCache: unknown keys are cached too; forget drops an entry", async () => {
  const { reads, lookup } = counted();
  const cache = new KeyCache(lookup, { now: () => 0 });
  assert.equal(await cache.lookup("f".repeat(64)), undefined);
  assert.equal(await cache.lookup("f".repeat(64)), undefined);
  assert.equal(reads.length, 1);
  cache.forget("f".repeat(64));
  await cache.lookup("f".repeat(64));
  assert.equal(reads.length, 2);
});

test("KeyCache: bounded; past maxEntries the oldest entry goes first", async () => {
  const { reads, lookup } = counted();
  const cache = new KeyCache(lookup, { maxEntries: 2, now: () => 0 });
  for (const h of ["a", "b", "c"]) await cache.lookup(h);
  await cache.lookup("c");
  await cache.lookup("b");
  assert.deepEqual(reads, ["a", "b", "c"], "b and c are still cached");
  await cache.lookup("a");
  assert.deepEqual(reads, ["a", "b", "c", "a"], "a was evicted");
});

test("KeyCache: a failed read is not cached", async () => {
  let fail = true;
  const cache = new KeyCache({ keyByHash: () => (fail ? Promise.reject(new Error("down")) : Promise.resolve(undefined)) }, { now: () => 0 });
  await assert.rejects(async () => cache.lookup("a"), /down/);
  fail = false;
  assert.equal(await cache.lookup("a"), undefined);
});

test("KeyCache: the store failing after a read: the last good record answers; forget still forgets", async () => {
  const { store, reads, lookup } = counted();
  const { record } = generateKey({ role: "call", tenant: "a", name: "n", createdBy: "x" });
  await store.putKey(record);
  const clock = { now: 0 };
  let fail = false;
  const cache = new KeyCache(
    { keyByHash: (hash) => (fail ? Promise.reject(new Error("down")) : lookup.keyByHash(hash)) },
    { ttlMs: 5_000, maxStaleMs: 60_000, now: () => clock.now },
  );
  await cache.lookup(record.hash);
  fail = true;
  clock.now = 20_000;
  assert.equal((await cache.lookup(record.hash))?.id, record.id);
  assert.equal(reads.length, 1);
  cache.forget(record.hash);
  await assert.rejects(async () => cache.lookup(record.hash), /down/, "a key revoked through this replica is not served from the last good value");
});
