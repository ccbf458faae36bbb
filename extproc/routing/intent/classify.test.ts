import assert from "node:assert/strict";
import { test } from "node:test";
import type { Message } from "../../../common/canonical/types.ts";
import { INTENTS, MODEL_THRESHOLD, classifyIntent, isIntent } from "./classify.ts";
import { predictIntent } from "./model.ts";

const user = (content: string): Message[] => [{ role: "user", content }];

test("INTENTS lists the twelve labels, unknown last", () => {
  assert.equal(INTENTS.length, 12);
  assert.equal(INTENTS[INTENTS.length - 1], "unknown");
  assert.ok(isIntent("code_gen"));
  assert.ok(!isIntent("codegen"));
});

test("the committed model alone gets obvious prompts right", () => {
  const cases: [string, string][] = [
    ["Translate 'good morning' into French", "translate"],
    ["def fib(n):\n    if n < 2: return n\n    return fib(n-1) + fib(n-3)\n\nfix the bug", "code_gen"],
    ["What is 37*41?", "math"],
    ["总结一下这篇文章：人工智能正在改变医疗、金融和教育等行业。", "summarize"],
    ["Why do cats purr when they are happy?", "qa"],
    ["北京到上海的高铁要多久？", "qa"],
    ["Write a poem about the moon", "creative_writing"],
  ];
  for (const [text, intent] of cases) assert.equal(predictIntent(text).intent, intent, text);
});

test("keywords win when they hit; the model answers otherwise", () => {
  assert.deepEqual(classifyIntent(user("Please summarize: the meeting moved to Friday.")), { intent: "summarize", confidence: 0.95, source: "keywords" });
  const r = classifyIntent(user("Why do cats purr when they are happy?"));
  assert.equal(r.source, "model");
  assert.equal(r.intent, "qa");
  assert.ok(r.confidence >= MODEL_THRESHOLD && r.confidence <= 1);
});

test("the last user message is classified; text parts are joined", () => {
  const messages: Message[] = [
    { role: "user", content: "Translate this into German: hello" },
    { role: "assistant", content: "Hallo" },
    {
      role: "user",
      content: [
        { type: "text", text: "Now write a haiku" },
        { type: "text", text: "about the sea" },
      ],
    },
  ];
  assert.equal(classifyIntent(messages).intent, "creative_writing");
});

test("a task-setting system prompt counts when the user message has no hit", () => {
  const messages: Message[] = [
    { role: "system", content: "You are a translation engine. Translate every message into English." },
    { role: "user", content: "Je voudrais réserver une table pour deux." },
  ];
  const r = classifyIntent(messages);
  assert.equal(r.intent, "translate");
  assert.equal(r.source, "keywords");
  assert.ok(r.confidence < 0.97);
  // The user's own explicit request still wins.
  assert.equal(classifyIntent([messages[0] as Message, { role: "user", content: "Write a poem about rain" }]).intent, "creative_writing");
});

test("a valid hint wins, case-insensitively; an invalid one is ignored", () => {
  assert.deepEqual(classifyIntent(user("What is 37*41?"), "Translate"), { intent: "translate", confidence: 1, source: "hint" });
  assert.deepEqual(classifyIntent(user("What is 37*41?"), " qa "), { intent: "qa", confidence: 1, source: "hint" });
  const r = classifyIntent(user("What is 37*41?"), "nonsense");
  assert.equal(r.intent, "math");
  assert.equal(r.source, "keywords");
});

test("empty, missing and garbage input is unknown", () => {
  assert.equal(classifyIntent([]).intent, "unknown");
  assert.equal(classifyIntent(user("")).intent, "unknown");
  assert.equal(classifyIntent(user("   \n ")).intent, "unknown");
  assert.equal(classifyIntent(user("!!! ??? ...")).intent, "unknown");
  assert.equal(classifyIntent([{ role: "user", content: [{ type: "image", url: "https://example.com/a.png" }] }]).intent, "unknown");
  for (const junk of ["asdfqwer zxcv", "xq7#k2!z@p9", "qwertyuiop"]) assert.equal(classifyIntent(user(junk)).intent, "unknown", junk);
});

test("classification is deterministic", () => {
  const text = "I'm planning a trip to Japan in April; what should I pack and which cities are worth it?";
  const first = classifyIntent(user(text));
  for (let i = 0; i < 5; i++) assert.deepEqual(classifyIntent(user(text)), first);
  const p = predictIntent(text);
  assert.deepEqual(predictIntent(text), p);
});
