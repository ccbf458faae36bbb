/** The shared semantic-store suite on memory (fake clock), plus index consistency under churn. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { silentLogger } from "../../../common/telemetry/logger.ts";
import { WorkerIndex } from "./index-client.ts";
import { MemorySemanticStore } from "./memory-semantic-store.ts";
import { DIMENSIONS, axis, entry, semanticStoreCases, toward, type HarnessLimits, type SemanticStoreHarness } from "./semantic-store.cases.ts";

function harness(limits: HarnessLimits = {}): SemanticStoreHarness {
  let now = 1_000_000;
  const index = new WorkerIndex({ dimensions: DIMENSIONS, logger: silentLogger() });
  const store = new MemorySemanticStore({
    index,
    maxBytes: limits.maxBytes ?? 1 << 20,
    maxEntries: limits.maxEntries ?? 10_000,
    logger: silentLogger(),
    now: () => now,
  });
  return {
    store,
    index,
    now: () => now,
    advance: (ms) => {
      now += ms;
      return Promise.resolve();
    },
    close: () => store.close(),
  };
}

semanticStoreCases("memory", (limits) => Promise.resolve(harness(limits)));

test("memory: under churn (inserts past max_entries, deletes, expiries) the index holds exactly the live entries", async () => {
  const h = harness({ maxEntries: 50 });
  try {
    const inserted = [];
    for (let i = 0; i < 400; i++) {
      const e = entry(h, `scope-${i % 3}`, toward(i % DIMENSIONS, 0.5 + (i % 50) / 100), { expiresAt: h.now() + (i % 7 === 0 ? 50 : 60_000) });
      inserted.push(e);
      await h.store.insert(e);
      if (i % 5 === 0) await h.store.delete(inserted[i - 3]?.id ?? "none");
      if (i % 40 === 0) await h.advance(60);
      if (i % 11 === 0) await h.store.nearest(`scope-${i % 3}`, axis(i % DIMENSIONS), 3, 0);
    }
    await h.advance(60);
    await h.store.nearest("scope-0", axis(0), 1, 0);
    const live = inserted.filter((e) => h.index.has(e.id));
    assert.equal(live.length, h.store.stats().entries);
    assert.ok(
      live.every((e) => e.expiresAt > h.now()),
      "nothing expired is indexed",
    );
    await h.index.flush();
    assert.equal((await h.index.stats()).size, h.store.stats().entries, "the worker holds one vector per entry");
    assert.ok(h.store.stats().entries <= 50);
  } finally {
    await h.close();
  }
});
