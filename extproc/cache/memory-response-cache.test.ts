/** The shared response-cache suite on memory (fake clock), plus its size bound (LRU by bytes). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { MemoryResponseCache } from "./memory-response-cache.ts";
import { responseCacheCases } from "./response-cache.cases.ts";

responseCacheCases("memory", () => {
  let now = 0;
  return {
    cache: new MemoryResponseCache(1024 * 1024, () => now),
    advance: (ms) => {
      now += ms;
      return Promise.resolve();
    },
  };
});

const answer = (size: number) => ({ completion: "x".repeat(size) });

test("memory: past max_bytes the least recently used entries go first", async () => {
  // Each entry: 100 bytes of completion + its key (tenant, NUL, hash "h<n>") = 104 bytes.
  const cache = new MemoryResponseCache(320);
  for (const hash of ["h1", "h2", "h3"]) await cache.put({ tenant: "t", hash }, answer(100), 60_000);
  assert.equal(cache.bytes, 312);
  assert.ok(await cache.get({ tenant: "t", hash: "h1" }), "h1 read: now the most recent");
  await cache.put({ tenant: "t", hash: "h4" }, answer(100), 60_000);
  assert.equal(await cache.get({ tenant: "t", hash: "h2" }), undefined, "h2 was the least recently used");
  for (const hash of ["h1", "h3", "h4"]) assert.ok(await cache.get({ tenant: "t", hash }), `${hash} kept`);
  assert.equal(cache.bytes, 312);
});

test("memory: an entry larger than the whole cache is not stored and evicts nothing", async () => {
  const cache = new MemoryResponseCache(320);
  await cache.put({ tenant: "t", hash: "small" }, answer(10), 60_000);
  await cache.put({ tenant: "t", hash: "huge" }, answer(1000), 60_000);
  assert.equal(await cache.get({ tenant: "t", hash: "huge" }), undefined);
  assert.ok(await cache.get({ tenant: "t", hash: "small" }));
});
