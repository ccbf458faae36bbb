import assert from "node:assert/strict";
import { test } from "node:test";
import {
  LEXICON,
  Lexicon,
  PREFIX,
  TEXT_HEAD,
  TEXT_TAIL,
  TextView,
  UNIT_CJK,
  UNIT_MARK,
  UNIT_WORD,
  analyseText,
  hashRange,
  isSpace,
  isWordChar,
} from "./text.ts";

function view(text: string): TextView {
  const v = new TextView();
  v.analyse(text);
  return v;
}

function unitTexts(v: TextView): string[] {
  return Array.from({ length: v.units }, (_, u) => v.lower.slice(v.starts[u], v.ends[u]));
}

test("a short text is read whole and lowercased", () => {
  const v = view("Hello World");
  assert.equal(v.lower, "hello world");
  assert.equal(v.cut, false);
});

test("a long text is read on its head and tail, joined by a newline", () => {
  const text = `${"a".repeat(TEXT_HEAD)}${"m".repeat(5000)}${"Z".repeat(TEXT_TAIL)}`;
  const v = view(text);
  assert.equal(v.cut, true);
  assert.equal(v.lower, `${"a".repeat(TEXT_HEAD)}\n${"z".repeat(TEXT_TAIL)}`);
  assert.equal(view("x".repeat(TEXT_HEAD + TEXT_TAIL)).cut, false);
});

test("units: ASCII words as `\\b` sees them, one unit per CJK character and per other visible character", () => {
  const v = view("Fix my_var(2); 翻译 café!");
  assert.deepEqual(unitTexts(v), ["fix", "my_var", "(", "2", ")", ";", "翻", "译", "caf", "é", "!"]);
  const kinds = Array.from(v.kinds.subarray(0, v.units));
  assert.deepEqual(kinds, [UNIT_WORD, UNIT_WORD, UNIT_MARK, UNIT_WORD, UNIT_MARK, UNIT_MARK, UNIT_CJK, UNIT_CJK, UNIT_WORD, UNIT_MARK, UNIT_MARK]);
});

test("unit hashes: a word's is `hashRange` of its characters, every digit read as 0", () => {
  const v = view("abc 1984 summarize");
  assert.equal(v.hashes[0], hashRange("abc", 0, 3));
  assert.equal(v.hashes[1], hashRange("0000", 0, 4));
  assert.equal(hashRange("a1", 0, 2), hashRange("a7", 0, 2));
  assert.equal(v.prefixHashes[2], hashRange("summarize", 0, PREFIX));
});

test("counts: letters, CJK and visible characters, numbers as `\\d+(\\.\\d+)?` counts them, Latin-1 marks", () => {
  const v = view("Pi is 3.14, e is 2.7.1 — 中文? (x)");
  assert.equal(v.letters, 8);
  assert.equal(v.cjk, 2);
  assert.equal(v.numbers, 3, "3.14, 2.7 and 1");
  assert.equal(v.visible, [..."Pi is 3.14, e is 2.7.1 — 中文? (x)"].filter((c) => c !== " ").length);
  assert.equal(v.latin1["?".charCodeAt(0)], 1);
  assert.equal(v.latin1["(".charCodeAt(0)], 1);
  assert.equal(v.latin1["p".charCodeAt(0)], 0, "characters inside words are not in the histogram");
});

test("character classes follow JavaScript's `\\w` and `\\s`", () => {
  for (const c of "aZ09_") assert.ok(isWordChar(c.charCodeAt(0)), c);
  for (const c of "-é中 ") assert.ok(!isWordChar(c.charCodeAt(0)), c);
  for (const c of " \t\n\u00a0\u3000\ufeff") assert.ok(isSpace(c.charCodeAt(0)), JSON.stringify(c));
  for (const c of "a.中") assert.ok(!isSpace(c.charCodeAt(0)), c);
});

test("lexicon: words get ids; a view resolves its words once, and again after words were added", () => {
  const lexicon = new Lexicon();
  const id = lexicon.add("alpha");
  assert.equal(lexicon.add("alpha"), id);
  assert.equal(lexicon.find("an alpha", 3, 8, hashRange("alpha", 0, 5)), id);
  assert.equal(lexicon.find("an alphas", 3, 9, hashRange("alphas", 0, 6)), -1);

  const v = view("zebraquagga meets okapiwolf");
  assert.equal(v.wordIds()[0], -1);
  const added = LEXICON.add("zebraquagga");
  assert.equal(v.wordIds()[0], added);
  assert.equal(v.wordIds()[1], -1, "`meets` is no reader's word");
});

test("analyseText remembers the last two texts", () => {
  const a = analyseText("first text");
  const b = analyseText("second text");
  assert.notEqual(a, b);
  assert.equal(analyseText("first text"), a);
  assert.equal(analyseText("second text"), b);
  assert.equal(a.text, "first text");
  analyseText("third text");
  analyseText("second text");
  assert.equal(analyseText("first text").lower, "first text");
});
