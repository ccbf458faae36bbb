import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Message } from "../../common/canonical/types.ts";
import { COMPLEXITY_WEIGHTS, complexityLevel, estimateComplexity, type ComplexityLevel } from "./complexity.ts";

const PARAGRAPH =
  "The city council met on Tuesday to discuss the new public transport plan. Members debated the cost of extending the tram line to the northern suburbs, which has been a long-standing request from residents. Supporters argued that the extension would reduce traffic congestion and improve air quality, while critics worried about the budget and the disruption during construction. The mayor proposed a phased approach, starting with a feasibility study next spring. Local businesses expressed cautious optimism, noting that better connections could bring more customers. Environmental groups welcomed the plan but asked for more bike lanes as well. The council will vote on the proposal next month after a period of public consultation. Residents can submit their comments online or attend one of three public meetings scheduled in the coming weeks. Officials said the final design would take into account feedback from the community and from transport experts. If approved, work could begin within two years, and the line could open to passengers by the end of the decade, according to early estimates.";

function user(text: string): Message[] {
  return [{ role: "user", content: text }];
}

const CASES: { name: string; text: string; levels: ComplexityLevel[] }[] = [
  { name: "greeting", text: "hi, how are you?", levels: ["low"] },
  { name: "greeting (zh)", text: "你好，最近怎么样？", levels: ["low"] },
  { name: "short but hard: time complexity", text: "what is the time complexity of this code?", levels: ["medium", "high"] },
  { name: "short but hard: time complexity (zh)", text: "这段代码的时间复杂度是多少？", levels: ["medium", "high"] },
  { name: "summarize a 200-word paragraph", text: `Summarize this paragraph: ${PARAGRAPH}`, levels: ["low", "medium"] },
  {
    name: "multi-step word problem",
    text: "A train leaves station A at 3 pm traveling at 60 km/h. Another train leaves station B, 300 km away, at 4 pm traveling at 90 km/h toward A. At what time do they meet, and how far from A?",
    levels: ["high"],
  },
  {
    name: "multi-step word problem with a condition",
    text: "Tom has 3 times as many apples as Jerry. If Jerry gives Tom 5 apples, Tom will have 4 times as many as Jerry. How many apples does each have at the beginning?",
    levels: ["high"],
  },
  {
    name: "multi-step word problem (zh)",
    text: "小明有 12 个苹果，给了小红 3 个，又买了 5 个，然后把剩下的平均分给 4 个朋友，每人分到多少个？",
    levels: ["high"],
  },
  { name: "derivative (zh)", text: "求 f(x) = x^3 + 2x 的导数", levels: ["high"] },
  { name: "proof", text: "Prove that the square root of 2 is irrational.", levels: ["medium", "high"] },
  { name: "trivial arithmetic", text: "what is 2+2?", levels: ["low"] },
  { name: "translation", text: "Translate to French: good morning", levels: ["low"] },
  { name: "translation (zh)", text: "把这句话翻译成英文：今天天气很好", levels: ["low"] },
  { name: "entity extraction", text: "Extract the person names from: John met Mary in Paris.", levels: ["low"] },
  { name: "why + step by step + compare", text: "Why is the sky blue? Explain step by step and compare it with sunsets.", levels: ["medium", "high"] },
  { name: "why + step by step + compare (zh)", text: "为什么天空是蓝色的？请一步一步推理，并比较日落时的颜色。", levels: ["medium", "high"] },
  {
    name: "code with a bug to fix",
    text: "```python\ndef f(xs):\n    for i in range(len(xs)):\n        for j in range(len(xs)):\n            if xs[i] == xs[j]: return True\n    return False\n```\nThere's a bug: it always returns True. Fix it and refactor.",
    levels: ["high"],
  },
  {
    name: "constraint list",
    text: "Write a product description for a water bottle.\n1. At most 50 words\n2. Must mention the lid\n3. No emojis\n4. Friendly tone",
    levels: ["medium"],
  },
  { name: "mixed-language chatter", text: "请帮我 review 一下这个 pull request 的 naming", levels: ["low"] },
];

describe("estimateComplexity", () => {
  for (const c of CASES) {
    test(`${c.name} → ${c.levels.join(" or ")}`, () => {
      const estimate = estimateComplexity(user(c.text));
      assert.ok(c.levels.includes(estimate.level), `${c.name}: got ${estimate.level} (${estimate.score}) ${JSON.stringify(estimate.features.strengths)}`);
      assert.equal(estimate.level, complexityLevel(estimate.score));
      assert.ok(estimate.score >= 0 && estimate.score <= 1);
    });
  }

  test("the short hard question scores above the long easy summary", () => {
    const hard = estimateComplexity(user("what is the time complexity of this code?")).score;
    const long = estimateComplexity(user(`Summarize this paragraph: ${PARAGRAPH}`)).score;
    assert.ok(hard > long, `${hard} <= ${long}`);
  });

  test("approximate tokens: Latin chars / 4, one per CJK char", () => {
    assert.equal(estimateComplexity(user("abcdefgh")).features.approxTokens, 2);
    assert.equal(estimateComplexity(user("今天天气很好")).features.approxTokens, 6);
    const parts: Message[] = [
      {
        role: "user",
        content: [
          { type: "text", text: "abcd" },
          { type: "image", url: "https://x/y.png" },
          { type: "text", text: "efgh" },
        ],
      },
    ];
    assert.equal(estimateComplexity(parts).features.approxTokens, 2);
  });

  test("length alone raises the score, log-scaled", () => {
    const short = estimateComplexity(user("word ".repeat(50))).score;
    const long = estimateComplexity(user("word ".repeat(5000))).score;
    assert.ok(long > short);
    assert.equal(estimateComplexity(user("word ".repeat(50_000))).features.strengths.length, 1);
  });

  test("turns and cross-turn references count", () => {
    const conversation: Message[] = [
      { role: "user", content: "Let's plan a trip." },
      { role: "assistant", content: "Sure, where?" },
      { role: "user", content: "Japan." },
      { role: "assistant", content: "Great." },
      { role: "user", content: "As I said above, I want to go in spring. Given the previous answer, which city?" },
    ];
    const estimate = estimateComplexity(conversation);
    assert.equal(estimate.features.userTurns, 3);
    assert.equal(estimate.features.crossTurnRefs, 2);
    assert.ok(estimate.score > estimateComplexity(user("which city?")).score);
    const zh = estimateComplexity([{ role: "user", content: "刚才你说的上面那个方案，再详细一点" }]);
    assert.equal(zh.features.crossTurnRefs, 2);
  });

  test("markers come from user messages, not the system prompt", () => {
    const withSystem: Message[] = [
      { role: "system", content: "Explain why, step by step, compare and analyse; prove every claim." },
      { role: "user", content: "hi" },
    ];
    assert.equal(estimateComplexity(withSystem).features.reasoningMarkers, 0);
    assert.equal(estimateComplexity(withSystem).level, "low");
  });

  test("mixed language raises the score slightly", () => {
    const mixed = estimateComplexity(user("请帮我 review 一下这个 pull request 的 naming"));
    assert.equal(mixed.features.mixedLanguage, true);
    assert.equal(mixed.score, COMPLEXITY_WEIGHTS.language);
    assert.equal(estimateComplexity(user("请帮我看一下这个合并请求的命名")).features.mixedLanguage, false);
  });

  test("several questions and a constraint list raise the structure signal", () => {
    const one = estimateComplexity(user("What is the capital of France?"));
    const many = estimateComplexity(user("What is the capital of France? And of Germany? Which is bigger?"));
    assert.equal(many.features.questions, 3);
    assert.ok(many.score > one.score);
  });

  test("empty and tool-only requests are low", () => {
    assert.equal(estimateComplexity([]).level, "low");
    assert.equal(estimateComplexity([{ role: "assistant", content: null, toolCalls: [{ id: "1", name: "f", arguments: "{}" }] }]).score, 0);
  });

  test("C++, O(n) and #include count as code markers", () => {
    const markers = (text: string): number => estimateComplexity(user(text)).features.codeMarkers;
    assert.ok(markers("Is C++ faster?") > markers("Is Go faster?"));
    assert.ok(markers("Is it O(n) or O(n log n)?") > markers("Is it fast or slow?"));
    assert.ok(markers("#include <stdio.h>") > markers("<stdio.h>"));
  });

  test("Chinese markers count only from Chinese text, and mixed text reads both", () => {
    const zh = estimateComplexity(user("为什么这个递归算法的时间复杂度是多少？请分析一下"));
    assert.ok(zh.features.reasoningMarkers >= 2 && zh.features.codeMarkers >= 2, JSON.stringify(zh.features));
    const mixed = estimateComplexity(user("请 explain 一下为什么这个 Python 函数有 bug"));
    assert.ok(mixed.features.reasoningMarkers >= 2 && mixed.features.codeMarkers >= 3, JSON.stringify(mixed.features));
  });

  test("a long message: markers come from its head and tail, tokens are scaled from them", () => {
    const middle = "The committee reviewed the budget in detail. ".repeat(100);
    const hidden = estimateComplexity(user(`Hello.\n${middle}Prove the theorem by induction.\n${middle}Thanks.`));
    assert.equal(hidden.features.mathMarkers, 0, "a marker in the unread middle does not count");
    const tail = estimateComplexity(user(`Hello.\n${middle}\nProve the theorem by induction.`));
    assert.ok(tail.features.mathMarkers >= 2, "the tail is read");
    // A uniform text: the scaled estimate is the exact count (4 letters per 5 characters, / 4).
    assert.equal(estimateComplexity(user("word ".repeat(5000))).features.approxTokens, 5000);
  });

  test("levels: low < 0.35 ≤ medium < 0.65 ≤ high", () => {
    assert.equal(complexityLevel(0.349), "low");
    assert.equal(complexityLevel(0.35), "medium");
    assert.equal(complexityLevel(0.649), "medium");
    assert.equal(complexityLevel(0.65), "high");
  });
});
