import assert from "node:assert/strict";
import { test } from "node:test";
import { MarkerCounter, expandChoices } from "./markers.ts";
import { TextView } from "./text.ts";

function counts<C extends string>(counter: MarkerCounter<C>, text: string): Record<C, number> {
  const view = new TextView();
  view.analyse(text);
  const found = counter.count(view);
  return Object.fromEntries(counter.categories.map((c) => [c, found[counter.index[c]]])) as Record<C, number>;
}

test("choices expand left to right", () => {
  assert.deepEqual(expandChoices("how {many|much}"), ["how many", "how much"]);
  assert.deepEqual(expandChoices("trade{-|}off{|s}"), ["trade-off", "trade-offs", "tradeoff", "tradeoffs"]);
  assert.deepEqual(expandChoices("plain"), ["plain"]);
});

test("words are whole words; phrases end at a word's end; stems take the rest of the word", () => {
  const counter = new MarkerCounter({ w: ["why", "sum of", "km/h", "c++"], s: ["explain*"] });
  assert.deepEqual(counts(counter, "Why? why-not whyever; the sum of it, the sum offset"), { w: 3, s: 0 });
  assert.deepEqual(counts(counter, "60 km/h, not km/hr; C++ code"), { w: 2, s: 0 });
  assert.deepEqual(counts(counter, "Explain, explained, EXPLAINING; unexplained, explai"), { w: 0, s: 3 });
});

test("per category, matches do not overlap and the first alternative that matches wins", () => {
  const counter = new MarkerCounter({ ref: ["as i said", "said above"], other: ["said above"] });
  // `as i said` takes `said`, so `said above` does not count again for `ref`; `other` counts on its own.
  assert.deepEqual(counts(counter, "As I said above, and as I said above."), { ref: 2, other: 2 });
});

test("a sticky pattern is tried at its key word", () => {
  const counter = new MarkerCounter({ c: ["must", { key: "exactly", re: /exactly \d+\b/y }], r: [{ key: "if", re: /if\b[^.]{1,40}\bthen\b/y }] });
  assert.deepEqual(counts(counter, "Use exactly 3 words, not exactly three. If it rains then stay; if so."), { c: 1, r: 1 });
  // The `if … then` match swallows what it spans.
  const both = new MarkerCounter({ r: ["why", { key: "if", re: /if\b[^.]{1,40}\bthen\b/y }] });
  assert.deepEqual(counts(both, "if you ask why then fine"), { r: 1 });
});

test("badly written alternatives are refused", () => {
  assert.throws(() => new MarkerCounter({ x: ["ab*"] }), /shorter than/);
  assert.throws(() => new MarkerCounter({ x: ["#include"] }), /word character/);
});
