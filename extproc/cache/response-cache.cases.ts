/**
 * The shared response-cache suite: every implementation runs it (`memory-response-cache.test.ts`,
 * `redis-response-cache.test.ts`). `advance` moves the store's clock (fake for memory, real for Redis).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ResponseCache } from "./response-cache.ts";

export interface CacheHarness {
  cache: ResponseCache;
  advance: (ms: number) => Promise<void>;
}

const ANSWER = { completion: '{"id":"chatcmpl-1","choices":[]}' };

export function responseCacheCases(name: string, make: () => CacheHarness): void {
  test(`${name}: a key never stored is a miss; a stored one is a hit with the same bytes`, async () => {
    const { cache } = make();
    assert.equal(await cache.get({ tenant: "a", hash: "h-miss" }), undefined);
    await cache.put({ tenant: "a", hash: "h-hit" }, ANSWER, 60_000);
    assert.deepEqual(await cache.get({ tenant: "a", hash: "h-hit" }), ANSWER);
  });

  test(`${name}: the same hash under another tenant is a miss`, async () => {
    const { cache } = make();
    await cache.put({ tenant: "a", hash: "h-scope" }, ANSWER, 60_000);
    assert.equal(await cache.get({ tenant: "b", hash: "h-scope" }), undefined);
  });

  test(`${name}: a second put replaces the entry`, async () => {
    const { cache } = make();
    await cache.put({ tenant: "a", hash: "h-again" }, ANSWER, 60_000);
    await cache.put({ tenant: "a", hash: "h-again" }, { completion: "{}" }, 60_000);
    assert.deepEqual(await cache.get({ tenant: "a", hash: "h-again" }), { completion: "{}" });
  });

  test(`${name}: an entry past its TTL is a miss`, async () => {
    const { cache, advance } = make();
    await cache.put({ tenant: "a", hash: "h-ttl" }, ANSWER, 40);
    await advance(120);
    assert.equal(await cache.get({ tenant: "a", hash: "h-ttl" }), undefined);
  });
}
