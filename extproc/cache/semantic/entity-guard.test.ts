import assert from "node:assert/strict";
import { test } from "node:test";
import { chineseNumber, extractEntities, guard } from "./entity-guard.ts";

test("extraction: numbers with units and money, times, literals, names", () => {
  const e = extractEntities(
    'Send $5 to bob@example.com by Friday tomorrow, see https://x.io/a and run `pip install` with max_tokens for the "Gold" plan on AWS in Paris, 3 km',
  );
  assert.deepEqual(e.numbers, ["$5", "3km"]);
  assert.deepEqual(e.times, ["day+1", "fri"]);
  assert.ok(
    e.literals.includes("bob@example.com") &&
      e.literals.includes("https://x.io/a") &&
      e.literals.includes("pip install") &&
      e.literals.includes("max_tokens") &&
      e.literals.includes("gold"),
  );
  assert.ok(e.names.includes("aws") && e.names.includes("paris"));
  assert.ok(!e.names.includes("send"), "a sentence's first word is not a name");
  const zh = extractEntities("明天下午三点在北京开会，预算两万元，用iPhone打电话");
  assert.deepEqual(zh.times, ["afternoon", "day+1"]);
  assert.deepEqual(zh.numbers, ["20000", "3"]);
  assert.ok(zh.names.includes("iphone"));
  assert.ok(extractEntities("userId and config.yaml.path").literals.includes("userId"));
  assert.ok(extractEntities("call os.path.join()").literals.includes("os.path.join()"));
});

test("Chinese numerals", () => {
  assert.equal(chineseNumber("三"), 3);
  assert.equal(chineseNumber("十五"), 15);
  assert.equal(chineseNumber("二十"), 20);
  assert.equal(chineseNumber("二百零五"), 205);
  assert.equal(chineseNumber("三万"), 30000);
  assert.equal(chineseNumber("一九八四"), 1984);
});

test("rejects: the key entity differs", () => {
  const rejected: [string, string, string][] = [
    ["What is 2 + 2?", "What is 2 + 3?", "numbers"],
    ["Convert 5 km to miles", "Convert 5 m to miles", "numbers"],
    ["How much is $20 in euros?", "How much is $200 in euros?", "numbers"],
    ["What's the weather today?", "What's the weather tomorrow?", "times"],
    ["Any flights on Monday?", "Any flights on Tuesday?", "times"],
    ["今天北京天气怎么样", "明天北京天气怎么样", "times"],
    ["三个苹果多少钱", "五个苹果多少钱", "numbers"],
    ["How do I use `map` in Rust?", "How do I use `filter` in Rust?", "literals"],
    ["What does max_tokens do?", "What does top_p do?", "literals"],
    ["Is https://a.com safe?", "Is https://b.com safe?", "literals"],
    ["What is the capital of France?", "What is the capital of Germany?", "names"],
    ["How do I install Docker on Ubuntu?", "How do I install Docker on Windows?", "names"],
    ["iPhone怎么截图", "Android怎么截图", "names"],
  ];
  for (const [a, b, reason] of rejected) assert.deepEqual(guard(a, b), { ok: false, reason }, `${a} | ${b}`);
});

test("accepts: the same entities, however phrased", () => {
  const accepted: [string, string][] = [
    ["What is the capital of France?", "Tell me France's capital city"],
    ["What is the capital of France?", "what's the capital of france"],
    ["How do I learn Python quickly?", "What is the fastest way to learn python?"],
    ["What's the weather today?", "How is the weather today?"],
    ["Book 2 tickets for tomorrow", "Reserve two tickets for tomorrow"],
    ["今天天气怎么样", "今天的天气如何"],
    ["怎么学习英语", "如何学好英语"],
    ["一个人怎么办", "一个人该怎么办"],
    ["How do I use `map` in Rust?", "How can I use `map` in Rust?"],
  ];
  for (const [a, b] of accepted) assert.deepEqual(guard(a, b), { ok: true }, `${a} | ${b}`);
});
