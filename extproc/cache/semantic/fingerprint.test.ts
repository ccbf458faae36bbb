import assert from "node:assert/strict";
import { test } from "node:test";
import { fingerprint, fingerprintsAgree } from "./fingerprint.ts";

const agree = (a: string, b: string) => fingerprintsAgree(fingerprint(a), fingerprint(b));

test("question types, English and Chinese", () => {
  const cases: [string, string][] = [
    ["What's the weather today?", "open"],
    ["How do I reset my password?", "open"],
    ["Which laptop should I buy?", "open"],
    ["Tell me about black holes", "open"],
    ["Is today good for a trip?", "yesno"],
    ["Can I eat eggs raw?", "yesno"],
    ["Why is the sky blue?", "why"],
    ["How come the sky is blue?", "why"],
    ["When did WW2 end?", "when"],
    ["Where is the Eiffel Tower?", "where"],
    ["Who wrote Hamlet?", "who"],
    ["How many legs does a spider have?", "quantity"],
    ["How much does it cost?", "quantity"],
    ["今天天气怎么样", "open"],
    ["这是什么", "open"],
    ["今天适合出游吗", "yesno"],
    ["是不是要下雨了", "yesno"],
    ["为什么天空是蓝色的", "why"],
    ["什么时候放假", "when"],
    ["厕所在哪里", "where"],
    ["谁发明了电话", "who"],
    ["一年有多少天", "quantity"],
  ];
  for (const [text, type] of cases) assert.equal(fingerprint(text).type, type, text);
});

test("negation and comparison, A-not-A questions aside", () => {
  assert.equal(fingerprint("Why don't cats like water?").negated, true);
  assert.equal(fingerprint("Why do cats like water?").negated, false);
  assert.equal(fingerprint("为什么猫不喜欢水").negated, true);
  assert.equal(fingerprint("是不是要下雨了").negated, false, "是不是 asks, it does not negate");
  assert.equal(fingerprint("这两个有什么不同").negated, false);
  assert.equal(fingerprint("Is Python better than Java?").comparison, true);
  assert.equal(fingerprint("Python和Java哪个好").comparison, true);
  assert.equal(fingerprint("比如说怎么做").comparison, false, "比如 is 'for example'");
});

test("rejects: same topic, another kind of answer", () => {
  const rejected: [string, string, string][] = [
    ["What's the weather today?", "Is today good for a trip?", "type"],
    ["今天天气怎么样", "今天适合出游吗", "type"],
    ["Why is the sky blue?", "When is the sky blue?", "type"],
    ["How do I cook rice?", "How long do I cook rice?", "type"],
    ["Can I take ibuprofen with alcohol?", "Can I not take ibuprofen with alcohol?", "negation"],
    ["猫喜欢吃什么", "猫不喜欢吃什么", "negation"],
    ["Is Python good for beginners?", "Is Python better than Java for beginners?", "comparison"],
    ["苹果手机好用吗", "苹果手机比安卓好用吗", "comparison"],
  ];
  for (const [a, b, reason] of rejected) assert.deepEqual(agree(a, b), { ok: false, reason }, `${a} | ${b}`);
});

test("accepts: paraphrases", () => {
  const accepted: [string, string][] = [
    ["What's the weather today?", "How is the weather today?"],
    ["How do I learn Python?", "What is the best way to learn Python?"],
    ["Explain recursion", "What is recursion?"],
    ["Can I eat eggs raw?", "Is it safe to eat raw eggs?"],
    ["今天天气怎么样", "今天的天气如何"],
    ["怎么学习英语", "学英语用什么方法"],
    ["我的电脑能玩这个游戏吗", "我的电脑能不能玩这个游戏"],
  ];
  for (const [a, b] of accepted) assert.deepEqual(agree(a, b), { ok: true }, `${a} | ${b}`);
});
