/** The response store's shared suite: every implementation (memory, Redis) passes the same cases. */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ResponseStore, StoredResponse } from "./response-store.ts";

/** A store with `ttlMs`; `advance` moves its clock (memory) or waits it out (Redis). */
export interface ResponseStoreHarness {
  make(ttlMs: number, maxResponses?: number): Promise<ResponseStore>;
  advance(ms: number): Promise<void>;
  /** Whether `maxResponses` applies (memory only). */
  bounded: boolean;
}

const turn = (text: string): StoredResponse => ({
  messages: [
    { role: "user", content: text },
    { role: "assistant", content: null, toolCalls: [{ id: "call_1", name: "f", arguments: '{"a":1}' }] },
    { role: "tool", toolCallId: "call_1", content: "42" },
    { role: "assistant", content: `answer to ${text}` },
  ],
});

export function responseStoreCases(name: string, h: ResponseStoreHarness): void {
  test(`${name}: a stored response comes back whole; an unknown id is undefined`, async () => {
    const store = await h.make(60_000);
    await store.put("t1", "resp_a", turn("a"));
    assert.deepEqual(await store.get("t1", "resp_a"), turn("a"));
    assert.equal(await store.get("t1", "resp_b"), undefined);
    await store.close();
  });

  test(`${name}: responses are scoped to their tenant`, async () => {
    const store = await h.make(60_000);
    await store.put("t1", "resp_a", turn("a"));
    assert.equal(await store.get("t2", "resp_a"), undefined);
    await store.put("t2", "resp_a", turn("other"));
    assert.deepEqual(await store.get("t1", "resp_a"), turn("a"));
    assert.deepEqual(await store.get("t2", "resp_a"), turn("other"));
    await store.close();
  });

  test(`${name}: a response expires ttlMs after it was stored`, async () => {
    const store = await h.make(200);
    await store.put("t1", "resp_a", turn("a"));
    assert.ok(await store.get("t1", "resp_a"));
    await h.advance(400);
    assert.equal(await store.get("t1", "resp_a"), undefined);
    await store.close();
  });

  test(`${name}: what a caller changes in a read does not change the store`, async () => {
    const store = await h.make(60_000);
    await store.put("t1", "resp_a", turn("a"));
    const read = await store.get("t1", "resp_a");
    read?.messages.push({ role: "user", content: "x" });
    assert.deepEqual(await store.get("t1", "resp_a"), turn("a"));
    await store.close();
  });

  if (h.bounded) {
    test(`${name}: past maxResponses the oldest goes first`, async () => {
      const store = await h.make(60_000, 2);
      await store.put("t1", "r1", turn("1"));
      await store.put("t1", "r2", turn("2"));
      await store.put("t1", "r3", turn("3"));
      assert.equal(await store.get("t1", "r1"), undefined);
      assert.ok(await store.get("t1", "r2"));
      assert.ok(await store.get("t1", "r3"));
      await store.close();
    });
  }
}
