import assert from "node:assert/strict";
import { test } from "node:test";
import type { Intent } from "./intents.ts";
import { matchKeywords } from "./keywords.ts";

const CASES: readonly [string, Intent][] = [
  ["Summarize this article: the city council voted to expand the bike lanes downtown.", "summarize"],
  ["tl;dr of the thread above please", "summarize"],
  ["总结一下这篇文章：公司第三季度营收增长了百分之十。", "summarize"],
  ["请概括下面这段话的内容", "summarize"],
  ["Translate 'good morning' into French", "translate"],
  ["How do you say 'thank you' in Japanese?", "translate"],
  ["把这句话翻译成英文：今天天气很好", "translate"],
  ["Extract all person names and dates from this email: Alice met Bob on May 3.", "extract_entity"],
  ["List all the company names mentioned in the text below.", "extract_entity"],
  ["提取下面文本中的所有地名：我去过北京和上海。", "extract_entity"],
  ["Classify the intent of this message: 'I want a refund'", "intent_classify"],
  ["Which category does this ticket belong to: billing or support?", "intent_classify"],
  ["判断这句话的意图：我想退货", "intent_classify"],
  ["Rewrite this paragraph to sound more formal: hey guys, meeting moved to 3.", "rewrite"],
  ["Please polish my cover letter opening.", "rewrite"],
  ["润色一下这段话：我们的产品非常好用", "rewrite"],
  ["Write a python function that reverses a linked list", "code_gen"],
  ["```js\nconst x = 1\n```\nwhy is this failing", "code_gen"],
  ["def fib(n):\n    return fib(n-1) + fib(n-3)\nfix the bug", "code_gen"],
  ["用Python实现一个函数，判断回文", "code_gen"],
  ["What is 37*41?", "math"],
  ["Solve for x: 3x + 10 = 5(x - 2)", "math"],
  ["计算 123 乘以 45", "math"],
  ["Write a poem about autumn leaves", "creative_writing"],
  ["Write a short story about a lonely robot", "creative_writing"],
  ["写一首关于大海的诗", "creative_writing"],
  ["写一个关于小猫的故事", "creative_writing"],
  ["hi there!", "chitchat"],
  ["How are you?", "chitchat"],
  ["你好", "chitchat"],
  ["谢谢！", "chitchat"],
  ["Think step by step: which weighs more after drying, the towel or the shirt?", "multi_hop_reasoning"],
  ["Compare PostgreSQL and MySQL on cost, then recommend one for a startup.", "multi_hop_reasoning"],
  ["首先分析原因，然后给出方案", "multi_hop_reasoning"],
];

for (const [text, intent] of CASES) {
  test(`keywords: ${JSON.stringify(text.slice(0, 40))} → ${intent}`, () => {
    assert.equal(matchKeywords(text)?.intent, intent);
  });
}

test("keywords: plain questions and near-misses are left to the model", () => {
  for (const text of [
    "Why is the sky blue?",
    "计算机二级考试难吗？",
    "火灾逃生示意图怎么画",
    "怎样提取住房公积金？",
    "Hello, what is the capital of France?",
    "A heat pump is used to extract heat from the ground in winter. How efficient is it?",
    "Select the best translation into predicate logic: Some students work hard.",
  ]) {
    assert.equal(matchKeywords(text), undefined, text);
  }
});

test("keywords: a hit carries a high score", () => {
  const hit = matchKeywords("Summarize this");
  assert.ok(hit && hit.score >= 0.85 && hit.score <= 1);
});

test("keywords: gated rules keep their hits on Chinese, mixed-language and long prompts", () => {
  const filler = "The committee reviewed the budget and the timeline in detail. ".repeat(60);
  const cases: [string, Intent][] = [
    ["请用Python写一个函数，计算斐波那契数列", "code_gen"],
    ["帮我translate这句话：今天天气很好", "translate"],
    ["把下面这段话翻译成English：我们明天开会", "translate"],
    [`${filler}\nSummarize the text above in three bullet points.`, "summarize"],
    [`Translate the following into German.\n${filler}`, "translate"],
    [`${filler}\n\nfrom collections import Counter\nprint(Counter("abc"))`, "code_gen"],
    [`Notes:\n${filler}\n    def total(xs):\n        return sum(xs)`, "code_gen"],
  ];
  for (const [text, intent] of cases) assert.equal(matchKeywords(text)?.intent, intent, text.slice(-60));
});

test("keywords: a code keyword counts only at a line start, as its pattern needs", () => {
  assert.equal(matchKeywords("Which function from the list below is continuous? It is imported from the standard library."), undefined);
  assert.equal(matchKeywords("Which is right?\n  class Node(object): pass")?.intent, "code_gen");
});

test("keywords: an instruction in the unread middle of a long prompt is not seen", () => {
  const filler = "The committee reviewed the budget and the timeline in detail. ".repeat(30);
  assert.equal(matchKeywords(`${filler} Please summarize this. ${filler}`), undefined);
});
