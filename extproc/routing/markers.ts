/**
 * Word-marker counting over the shared text pass (`text.ts`), in place of a global regular
 * expression of `\b(a|b|c…)\b` alternatives per category: one walk over the words, whose
 * `LEXICON` ids the pass resolved, each id indexing the alternatives that start with that word.
 * Per category the count is what such a regular expression's matches would number: matches
 * start at a word, do not overlap, and the first alternative that matches wins.
 *
 * An alternative is written as
 * - a word or phrase, `"why"`, `"as i said"`, `"km/h"`: it starts at a word and, if it ends
 *   with a word character, ends at the end of a word;
 * - a stem, `"explain*"`: a word that starts so (`\bexplain\w*\b`); at least `PREFIX`
 *   characters before the `*` (a stem is found by the hash of a word's first `PREFIX`);
 * - with `{a|b}` choices, expanded in order: `"how {many|much}"`, `"trade{-|}off{|s}"`;
 * - or a sticky pattern tried at its key word: `{ key: "if", re: /if\b.{1,9}then\b/y }`.
 */
import { LEXICON, PREFIX, type TextView, UNIT_WORD, hashRange, isWordChar } from "./text.ts";

export type MarkerAlternative = string | { key: string; re: RegExp };

interface Alternative {
  category: number;
  /** The word, phrase or stem; empty for a pattern. */
  text: string;
  stem: boolean;
  re: RegExp | undefined;
}

/** `"a{b|c}d"` → `["abd", "acd"]`, choices expanded left to right. */
export function expandChoices(pattern: string): string[] {
  const open = pattern.indexOf("{");
  if (open < 0) return [pattern];
  const close = pattern.indexOf("}", open);
  const rest = expandChoices(pattern.slice(close + 1));
  return pattern
    .slice(open + 1, close)
    .split("|")
    .flatMap((choice) => rest.map((tail) => `${pattern.slice(0, open)}${choice}${tail}`));
}

/** The leading word of `text` (its run of word characters), which an alternative must have. */
function leadingWord(text: string): string {
  let end = 0;
  while (end < text.length && isWordChar(text.charCodeAt(end))) end++;
  if (end === 0) throw new Error(`marker '${text}' does not start with a word character`);
  return text.slice(0, end);
}

function compile(category: number, spec: MarkerAlternative): { key: string; alternative: Alternative }[] {
  if (typeof spec !== "string") return [{ key: spec.key, alternative: { category, text: "", stem: false, re: spec.re } }];
  return expandChoices(spec).map((text) => {
    if (!text.endsWith("*")) return { key: leadingWord(text), alternative: { category, text, stem: false, re: undefined } };
    const stem = text.slice(0, -1);
    if (stem.length < PREFIX) throw new Error(`marker stem '${text}' is shorter than ${PREFIX} characters`);
    return { key: stem.slice(0, PREFIX), alternative: { category, text: stem, stem: true, re: undefined } };
  });
}

/** Alternatives by the `LEXICON` id of their key, in order. */
function byLexiconId(entries: { key: string; alternative: Alternative }[]): Alternative[][] {
  const byId: Alternative[][] = [];
  for (const { key, alternative } of entries) (byId[LEXICON.add(key)] ??= []).push(alternative);
  return byId;
}

/** The stems that share the hash of their first `PREFIX` characters. */
interface StemKey {
  hash: number;
  alternatives: Alternative[];
}

/** Stems in 64 buckets by the top bits of that hash: most words find an empty bucket. */
function stemBuckets(entries: { key: string; alternative: Alternative }[]): StemKey[][] {
  const buckets: StemKey[][] = Array.from({ length: 64 }, () => []);
  for (const { key, alternative } of entries) {
    const hash = hashRange(key, 0, key.length);
    const bucket = buckets[hash >>> 26] ?? [];
    const found = bucket.find((stem) => stem.hash === hash);
    if (found) found.alternatives.push(alternative);
    else bucket.push({ hash, alternatives: [alternative] });
  }
  return buckets;
}

/** `list[id]` for a lexicon id (-1: none); reading only inside the array keeps the access fast. */
function entryOf<T>(list: readonly (T | undefined)[], id: number): T | undefined {
  return id >= 0 && id < list.length ? list[id] : undefined;
}

/** Counts the matches of each category's alternatives in a text view. */
export class MarkerCounter<C extends string> {
  readonly categories: readonly C[];
  /** Each category's index in the counts `count` returns. */
  readonly index: Readonly<Record<C, number>>;
  private readonly byWord: Alternative[][];
  private readonly byStem: StemKey[][];
  private readonly counts: Int32Array;
  /** Per category, where its last match ended: matches do not overlap. */
  private readonly matchedUntil: Int32Array;

  constructor(spec: Readonly<Record<C, readonly MarkerAlternative[]>>) {
    this.categories = Object.keys(spec) as C[];
    this.index = Object.fromEntries(this.categories.map((category, i) => [category, i])) as Record<C, number>;
    const compiled = this.categories.flatMap((category, i) => spec[category].flatMap((alternative) => compile(i, alternative)));
    this.byWord = byLexiconId(compiled.filter((c) => !c.alternative.stem));
    this.byStem = stemBuckets(compiled.filter((c) => c.alternative.stem));
    this.counts = new Int32Array(this.categories.length);
    this.matchedUntil = new Int32Array(this.categories.length);
  }

  /** The count of each category in `view.lower`, by `index`, in an array the next call overwrites. */
  count(view: TextView): Int32Array {
    this.counts.fill(0);
    this.matchedUntil.fill(0);
    const ids = view.wordIds();
    for (let u = 0; u < view.units; u++) {
      const words = entryOf(this.byWord, ids[u] ?? -1);
      if (words) this.tryAll(words, view, u);
      if (view.kinds[u] === UNIT_WORD && (view.ends[u] ?? 0) - (view.starts[u] ?? 0) >= PREFIX) this.tryStems(view, u);
    }
    return this.counts;
  }

  /** Tries the stems that share word `u`'s first `PREFIX` characters' hash. */
  private tryStems(view: TextView, u: number): void {
    const hash = view.prefixHashes[u] ?? 0;
    const bucket = this.byStem[hash >>> 26] ?? [];
    for (let i = 0; i < bucket.length; i++) {
      const stem = bucket[i] as StemKey;
      if (stem.hash === hash) this.tryAll(stem.alternatives, view, u);
    }
  }

  /** Tries alternatives at word `u`, counting the first match per category. */
  private tryAll(alternatives: readonly Alternative[], view: TextView, u: number): void {
    const start = view.starts[u] ?? 0;
    const end = view.ends[u] ?? 0;
    for (const alternative of alternatives) {
      const c = alternative.category;
      if (start < (this.matchedUntil[c] ?? 0)) continue;
      const matchEnd = matchAt(alternative, view.lower, start, end);
      if (matchEnd < 0) continue;
      this.counts[c] = (this.counts[c] ?? 0) + 1;
      this.matchedUntil[c] = matchEnd;
    }
  }
}

/** Where `alternative` matched at the word `lower[start, end)` ends, or -1. */
function matchAt(alternative: Alternative, lower: string, start: number, end: number): number {
  const { text, re } = alternative;
  if (re !== undefined) {
    re.lastIndex = start;
    return re.test(lower) ? re.lastIndex : -1;
  }
  if (alternative.stem) return end - start >= text.length && lower.startsWith(text, start) ? end : -1;
  if (!lower.startsWith(text, start)) return -1;
  const matchEnd = start + text.length;
  // A word is whole already; a phrase must end at a word's end if its last character is a word's.
  if (matchEnd > end && isWordChar(text.charCodeAt(text.length - 1)) && isWordChar(lower.charCodeAt(matchEnd))) return -1;
  return matchEnd;
}
