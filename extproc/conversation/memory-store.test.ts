import assert from "node:assert/strict";
import { test } from "node:test";
import { MemoryConversationStore } from "./memory-store.ts";
import { conversationStoreCases } from "./store.cases.ts";

conversationStoreCases("memory", (ttlMs = 60_000) => {
  let now = 1_000;
  const store = new MemoryConversationStore({ ttlMs, maxConversations: 1_000 }, () => now);
  return Promise.resolve({ store, close: () => store.close(), pass: (ms: number) => Promise.resolve(void (now += ms)) });
});

test("memory: past maxConversations the least recently written goes first", async () => {
  const store = new MemoryConversationStore({ ttlMs: 60_000, maxConversations: 2 });
  await store.append("t", "a", [{ role: "user", content: "a" }], "edge");
  await store.append("t", "b", [{ role: "user", content: "b" }], "edge");
  await store.append("t", "a", [{ role: "user", content: "a2" }], "edge");
  await store.append("t", "c", [{ role: "user", content: "c" }], "edge");
  assert.equal(await store.get("t", "b"), undefined);
  assert.equal((await store.get("t", "a"))?.messages.length, 2);
  assert.ok(await store.get("t", "c"));
});
