/**
 * The one suite every `ConversationStore` passes (run by `memory-store.test.ts` and
 * `redis-store.test.ts`). `open` gives a fresh, empty store with a 60 s time to live, or the
 * given one. No case is skipped.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Message } from "../../common/canonical/types.ts";
import type { ConversationStore } from "./store.ts";

export interface OpenedStore {
  store: ConversationStore;
  close: () => Promise<void>;
  /** Moves the store's clock (memory) or waits (Redis) past `ms`. */
  pass: (ms: number) => Promise<void>;
}

const user = (text: string): Message => ({ role: "user", content: text });
const assistant = (text: string): Message => ({ role: "assistant", content: text });

export function conversationStoreCases(name: string, open: (ttlMs?: number) => Promise<OpenedStore>): void {
  const withStore = (title: string, body: (opened: OpenedStore) => Promise<void>, ttlMs?: number): void => {
    test(title, async () => {
      const opened = await open(ttlMs);
      try {
        await body(opened);
      } finally {
        await opened.close();
      }
    });
  };

  describe(`ConversationStore: ${name}`, () => {
    withStore("an unknown conversation is undefined; an append starts it", async ({ store }) => {
      assert.equal(await store.get("t1", "conv-1"), undefined);
      await store.append("t1", "conv-1", [user("hi"), assistant("hello")], "edge");
      assert.deepEqual(await store.get("t1", "conv-1"), { messages: [user("hi"), assistant("hello")], dropped: 0, lastTarget: "edge" });
    });

    withStore("tool calls and tool results are kept, in order", async ({ store }) => {
      const exchange: Message[] = [
        user("weather in Paris?"),
        { role: "assistant", content: null, toolCalls: [{ id: "call_1", name: "weather", arguments: '{"city":"Paris"}' }] },
        { role: "tool", toolCallId: "call_1", content: '{"c":21}' },
        assistant("21 °C"),
      ];
      await store.append("t1", "c", exchange, "cloud");
      assert.deepEqual((await store.get("t1", "c"))?.messages, exchange);
    });

    withStore("the same id under another tenant is another conversation", async ({ store }) => {
      await store.append("tenant-a", "shared-id", [user("secret of a"), assistant("ok")], "cloud");
      assert.equal(await store.get("tenant-b", "shared-id"), undefined);
      await store.append("tenant-b", "shared-id", [user("b")], "edge");
      assert.equal((await store.get("tenant-a", "shared-id"))?.messages.length, 2);
      assert.deepEqual((await store.get("tenant-b", "shared-id"))?.messages, [user("b")]);
      // Ids that look like they reach into another tenant's key do not.
      assert.equal(await store.get("tenant", "a:shared-id"), undefined);
      assert.equal(await store.get("tenant-a:shared-id", ""), undefined);
    });

    withStore("concurrent exchanges append whole, one after the other; none is lost", async ({ store }) => {
      const exchanges = Array.from({ length: 20 }, (_, i) => [user(`q${i}`), assistant(`a${i}`)]);
      await Promise.all(exchanges.map((e) => store.append("t1", "busy", e, "cloud")));
      const messages = (await store.get("t1", "busy"))?.messages ?? [];
      assert.equal(messages.length, 40);
      for (let i = 0; i < 40; i += 2) {
        const q = messages[i]?.content as string;
        assert.equal(messages[i + 1]?.content, q.replace("q", "a"), `exchange ${q} stayed together`);
      }
    });

    withStore("compact folds the head into the summary; a raced compact is a no-op", async ({ store }) => {
      await store.append("t1", "c", [user("u0"), assistant("a0"), user("u1"), assistant("a1"), user("u2"), assistant("a2")], "cloud");
      assert.equal(await store.compact("t1", "c", 0, { through: 4, text: "u0 a0 u1 a1", by: "extractive" }), true);
      const after = await store.get("t1", "c");
      assert.deepEqual(after?.messages, [user("u2"), assistant("a2")]);
      assert.equal(after?.dropped, 4);
      assert.deepEqual(after?.summary, { through: 4, text: "u0 a0 u1 a1", by: "extractive" });
      assert.equal(await store.compact("t1", "c", 0, { through: 5, text: "stale", by: "extractive" }), false, "dropped moved on");
      assert.equal((await store.get("t1", "c"))?.messages.length, 2);
    });

    withStore("saveSummary keeps the summary that covers more", async ({ store }) => {
      await store.append("t1", "c", [user("u0"), assistant("a0"), user("u1"), assistant("a1")], "edge");
      await store.saveSummary("t1", "c", { through: 2, text: "first", by: "extractive" });
      await store.saveSummary("t1", "c", { through: 1, text: "older", by: "extractive" });
      assert.equal((await store.get("t1", "c"))?.summary?.text, "first");
      await store.saveSummary("t1", "c", { through: 2, text: "rewritten", by: "edge:tiny" });
      assert.equal((await store.get("t1", "c"))?.summary?.text, "rewritten", "the edge's rewrite replaces the extractive summary it covers");
      await store.saveSummary("t1", "c", { through: 2, text: "again", by: "extractive" });
      await store.saveSummary("t1", "c", { through: 2, text: "again", by: "edge:tiny" });
      assert.equal((await store.get("t1", "c"))?.summary?.text, "rewritten", "but nothing replaces a model's summary of as many messages");
      await store.saveSummary("t1", "unknown", { through: 2, text: "x", by: "extractive" });
      assert.equal(await store.get("t1", "unknown"), undefined, "a summary does not start a conversation");
    });

    withStore("delete removes it for that tenant only", async ({ store }) => {
      await store.append("t1", "c", [user("x")], "edge");
      await store.append("t2", "c", [user("y")], "edge");
      assert.equal(await store.delete("t1", "c"), true);
      assert.equal(await store.delete("t1", "c"), false);
      assert.equal(await store.get("t1", "c"), undefined);
      assert.ok(await store.get("t2", "c"));
    });

    withStore(
      "a conversation expires its time to live after the last write",
      async ({ store, pass }) => {
        await store.append("t1", "c", [user("x")], "edge");
        await pass(150);
        await store.append("t1", "c", [user("y")], "edge");
        await pass(150);
        assert.equal((await store.get("t1", "c"))?.messages.length, 2, "the second write renewed it");
        await pass(400);
        assert.equal(await store.get("t1", "c"), undefined);
      },
      300,
    );
  });
}
