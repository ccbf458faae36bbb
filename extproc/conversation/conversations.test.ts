/**
 * The pieces of a kept conversation: overlap detection, the extractive summary, the brief's
 * switch rule (a gear change sends a summary and the last two full turns) and the incremental
 * summary (extended with what aged out, not rebuilt).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Message } from "../../common/canonical/types.ts";
import { GatewayError } from "../../common/errors.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import { conversationsSchema } from "./config-schema.ts";
import { assemble } from "./assemble.ts";
import { compressed } from "./compress.ts";
import { Conversations } from "./conversations.ts";
import { carriesFact, extendSummary } from "./extractive.ts";
import { MemoryConversationStore } from "./memory-store.ts";

const u = (content: string): Message => ({ role: "user", content });
const a = (content: string): Message => ({ role: "assistant", content });

test("assemble: only new messages, a resent tail, the whole history resent, a client that kept more", () => {
  const stored = [u("q1"), a("a1"), u("q2"), a("a2")];
  assert.deepEqual(assemble(stored, [u("q3")]).prepend, stored);
  const tail = assemble(stored, [u("q2"), a("a2"), u("q3")]);
  assert.deepEqual(tail.prepend, [u("q1"), a("a1")]);
  assert.deepEqual(tail.newMessages, [u("q3")]);
  const whole = assemble(stored, [{ role: "system", content: "sys" }, ...stored, u("q3")]);
  assert.deepEqual(whole.prepend, []);
  assert.deepEqual(whole.newMessages, [u("q3")]);
  assert.deepEqual(whole.system, [{ role: "system", content: "sys" }]);
  const more = assemble(stored, [u("q0"), a("a0"), ...stored, u("q3")]);
  assert.deepEqual(more.prepend, []);
  assert.deepEqual(more.newMessages, [u("q3")]);
});

test("extractive: facts stay verbatim, chatter and repeats go", () => {
  assert.equal(carriesFact("The budget is 12000 euros."), true);
  assert.equal(carriesFact("We decided to go with Postgres."), true);
  assert.equal(carriesFact("Call Maria about it."), true);
  assert.equal(carriesFact("我们决定周五上线。"), true);
  assert.equal(carriesFact("that sounds nice and fun"), false);
  const summary = extendSummary(undefined, [u("Hello there. The code is 7731. That sounds fun."), a("The code is 7731! Anything else?")]);
  assert.equal(summary, "User: The code is 7731.\nAssistant: Anything else?", "the repeat (punctuation aside) is dropped");
});

test("the summary is extended with what aged out since, not rebuilt", () => {
  const history = [u("Budget 100."), a("ok"), u("Deadline 5 May."), a("ok"), u("Owner is Ada."), a("ok"), u("chat"), a("ok")];
  const first = compressed({ history: history.slice(0, 6), firstSeq: 0, summary: undefined });
  assert.equal(first.summary?.through, 2);
  let calls = 0;
  const counting = (previous: string | undefined, aged: readonly Message[]) => {
    calls++;
    assert.equal(previous, first.summary?.text, "the stored summary is the start");
    assert.deepEqual(aged, history.slice(2, 4), "only what aged out since");
    return extendSummary(previous, aged);
  };
  const second = compressed({ history, firstSeq: 0, summary: first.summary }, counting);
  assert.equal(calls, 1);
  assert.equal(second.summary?.through, 4);
  assert.equal(second.summary?.text, "User: Budget 100.\nUser: Deadline 5 May.");
  assert.deepEqual(second.kept, history.slice(4));
});

test("a gear change sends the summary and the last two full turns; staying on the gear sends everything", async () => {
  const settings = conversationsSchema.parse({});
  const store = new MemoryConversationStore({ ttlMs: 60_000, maxConversations: 10 });
  const history = [u("Our budget is 500 dollars."), a("Noted."), u("chat one"), a("ok"), u("chat two"), a("ok")];
  await store.append("t", "c", history, "edge");
  const conversations = new Conversations(store, settings, silentLogger());
  const open = async () => {
    const turn = await conversations.open("t", "c", "openai", { model: "m", messages: [{ role: "user", content: "and now?" }] }, [u("and now?")], "req");
    assert.ok(!(turn instanceof Error));
    return turn;
  };
  const same = (await open()).forTarget("edge", "qwen-small");
  assert.equal((same.messages as unknown[]).length, 7);
  const turn = await open();
  const switched = turn.forTarget("cloud", "gpt-4o");
  const messages = switched.messages as { role: string; content: string }[];
  assert.equal(messages[0]?.role, "system");
  assert.match(messages[0]?.content ?? "", /Our budget is 500 dollars\./);
  assert.deepEqual(
    messages.slice(1).map((m) => m.content),
    ["chat one", "ok", "chat two", "ok", "and now?"],
  );
  assert.equal(turn.stats.summarized, 2);
  assert.ok(turn.stats.sentTokens < turn.stats.historyTokens + 20);
  // The summary was saved for the next turns.
  assert.equal((await store.get("t", "c"))?.summary?.through, 2);
});

test("over the store's cap (max_messages): the history is summarized and the store compacted, the request never refused", async () => {
  const store = new MemoryConversationStore({ ttlMs: 60_000, maxConversations: 10 });
  const history: Message[] = [];
  for (let i = 0; i < 6; i++) history.push(u(`Question ${i}: the code is ${1000 + i}.`), a(`Answer ${i}.`));
  await store.append("t", "cap", history, "cloud");
  // A window large enough that only the cap (8 messages, 12 stored) makes it summarize.
  const settings = conversationsSchema.parse({ max_messages: 8 });
  const turn = await new Conversations(store, settings, silentLogger()).open("t", "cap", "openai", { model: "gpt-4o", messages: [] }, [u("next")], "r");
  assert.ok(!(turn instanceof Error));
  const body = JSON.stringify(turn.forTarget("cloud", "gpt-4o"));
  assert.match(body, /the code is 1000\./, "the oldest fact is in the summary");
  assert.equal(turn.stats.summarized, 8);
  const after = await store.get("t", "cap");
  assert.equal(after?.dropped, 8, "the summarized messages were compacted away");
  assert.equal(after?.messages.length, 4);
  assert.equal(after?.summary?.through, 8);
});

test("require_existing per tenant: an unknown id is a 404 for a tenant that requires it, a new conversation elsewhere", async () => {
  const settings = conversationsSchema.parse({ tenants: { strict: { require_existing: true } } });
  const conversations = new Conversations(new MemoryConversationStore({ ttlMs: 60_000, maxConversations: 10 }), settings, silentLogger());
  const refused = await conversations.open("strict", "unknown", "openai", { model: "m", messages: [] }, [u("hi")], "r1");
  assert.ok(refused instanceof GatewayError && refused.status === 404 && refused.code === "conversation_not_found");
  const opened = await conversations.open("relaxed", "unknown", "openai", { model: "m", messages: [] }, [u("hi")], "r2");
  assert.ok(!(opened instanceof GatewayError), "another tenant starts a conversation");
  // The gateway-wide setting, overridden the other way for one tenant.
  const loose = conversationsSchema.parse({ require_existing: true, tenants: { open: { require_existing: false } } });
  assert.equal(new Conversations(new MemoryConversationStore({ ttlMs: 1, maxConversations: 1 }), loose, silentLogger()).requireExisting("open"), false);
  assert.equal(new Conversations(new MemoryConversationStore({ ttlMs: 1, maxConversations: 1 }), loose, silentLogger()).requireExisting("any"), true);
});
