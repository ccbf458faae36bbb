/**
 * The built-in embedder: offline, no model, a few microseconds per question, English and Chinese.
 * A question becomes a bag of hashed features, each signed-hashed into `dimensions` buckets, then
 * L2-normalised:
 *
 * - word unigrams (function words weighted down), and a crude stem (plural / -ing / -ed cut);
 * - word bigrams (word order: "dog bites man" is not "man bites dog");
 * - character trigrams inside words of five letters or more (spelling and morphology:
 *   "extinct" ~ "extinction");
 * - CJK: character unigrams and bigrams (Chinese has no spaces; bigrams approximate words),
 *   common function characters weighted down.
 *
 * Term frequency is sublinear (1 + ln tf). No weights are learned from data: the feature weights
 * below are a handful of constants picked by hand and checked on the paraphrase bench
 * (`bench/cache/semantic-quality.ts`), so nothing derived from research-only data ships.
 */
import { isCjk } from "../../routing/text.ts";
import type { Embedder } from "./embedder.ts";

export const HASHED_EMBEDDER_NAME = "builtin-hashed-v1";
export const HASHED_DIMENSIONS = 384;

const WEIGHT = { word: 1, stopWord: 0.25, stem: 0.5, bigram: 0.6, trigram: 0.2, cjk: 0.8, cjkStop: 0.25, cjkBigram: 1 } as const;

/** English function words: they carry little of a question's topic. */
const STOP_WORDS = new Set(
  (
    "a an the is are am was were be been being do does did doing have has had having i me my we our you your he she it its they them their " +
    "this that these those there here of in on at to for from by with about as into onto over under than then so and or but if " +
    "what which who whom whose when where why how can could should would will shall may might must get got some any all just " +
    "very really much many more most one s t ve ll d re m"
  ).split(" "),
);

/** Chinese function characters. */
const CJK_STOP = new Set(Array.from("的了吗呢吧啊呀是在我你他她它们这那个有和就都也很么得地着过与及或"));

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 16777619;

/** FNV-1a of `text` continuing from `h` (chains: the hash of a bigram is one pass over both words). */
function fnv(h: number, text: string): number {
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return h;
}

/** Feature kinds seed the hash, so a word and a trigram with the same letters differ. */
const SEED = {
  word: fnv(FNV_OFFSET, "w:"),
  stem: fnv(FNV_OFFSET, "s:"),
  bigram: fnv(FNV_OFFSET, "b:"),
  trigram: fnv(FNV_OFFSET, "t:"),
  cjk: fnv(FNV_OFFSET, "c:"),
  cjkBigram: fnv(FNV_OFFSET, "d:"),
};

/** Lowercased, width-folded (NFKC), contractions opened: "What's" → "what is", "don't" → "do not". */
export function normaliseQuestion(text: string): string {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[\u2018\u2019\u02bc`]/g, "'")
    .replace(/\b(can)'t\b/g, "can not")
    .replace(/\bwon't\b/g, "will not")
    .replace(/n't\b/g, " not")
    .replace(/'s\b/g, " is")
    .replace(/'re\b/g, " are")
    .replace(/'m\b/g, " am")
    .replace(/'ll\b/g, " will")
    .replace(/'ve\b/g, " have")
    .replace(/'d\b/g, " would");
}

/** Units of a normalised text: runs of letters/digits (non-CJK), and single CJK characters. */
export function units(lower: string): { text: string; cjk: boolean }[] {
  const out: { text: string; cjk: boolean }[] = [];
  let start = -1;
  for (let i = 0; i <= lower.length; i++) {
    const code = i < lower.length ? lower.charCodeAt(i) : 32;
    const cjk = isCjk(code);
    const wordChar = !cjk && (isAsciiAlnum(code) || (code > 0x7f && /[\p{L}\p{N}]/u.test(lower[i] ?? "")));
    if (wordChar) {
      if (start < 0) start = i;
      continue;
    }
    if (start >= 0) {
      out.push({ text: lower.slice(start, i), cjk: false });
      start = -1;
    }
    if (cjk) out.push({ text: lower[i] ?? "", cjk: true });
  }
  return out;
}

function isAsciiAlnum(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || (code >= 65 && code <= 90);
}

/** A crude English stem: plural, -ing, -ed, -ly cut; short words unchanged. */
export function stem(word: string): string {
  if (word.length <= 4) return word;
  if (word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (word.endsWith("ing") && word.length > 5) return word.slice(0, -3);
  if (word.endsWith("ed") && word.length > 5) return word.slice(0, -2);
  if (word.endsWith("ly") && word.length > 5) return word.slice(0, -2);
  if (word.endsWith("es") && /(?:ss|sh|ch|x)es$/.test(word)) return word.slice(0, -2);
  if (word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}

export interface HashedEmbedderOptions {
  /** Vector size; default 384. */
  dimensions?: number;
}

export class HashedEmbedder implements Embedder {
  readonly name: string;
  readonly dimensions: number;

  constructor(options: HashedEmbedderOptions = {}) {
    this.dimensions = options.dimensions ?? HASHED_DIMENSIONS;
    this.name = this.dimensions === HASHED_DIMENSIONS ? HASHED_EMBEDDER_NAME : `${HASHED_EMBEDDER_NAME}/${this.dimensions}`;
  }

  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    return Promise.resolve(texts.map((t) => this.embedOne(t)));
  }

  /** The vector of one text, synchronously. */
  embedOne(text: string): Float32Array {
    // Feature hash → [weight, count]; a feature's weight is fixed by its kind.
    const features = new Map<number, [number, number]>();
    const add = (hash: number, weight: number): void => {
      const entry = features.get(hash);
      if (entry === undefined) features.set(hash, [weight, 1]);
      else entry[1]++;
    };
    const us = units(normaliseQuestion(text));
    let previous: { text: string; cjk: boolean } | undefined;
    for (const u of us) {
      if (u.cjk) {
        add(fnv(SEED.cjk, u.text), CJK_STOP.has(u.text) ? WEIGHT.cjkStop : WEIGHT.cjk);
        if (previous?.cjk) add(fnv(fnv(SEED.cjkBigram, previous.text), u.text), WEIGHT.cjkBigram);
      } else {
        const stop = STOP_WORDS.has(u.text);
        add(fnv(SEED.word, u.text), stop ? WEIGHT.stopWord : WEIGHT.word);
        if (!stop) {
          const s = stem(u.text);
          add(fnv(SEED.stem, s), WEIGHT.stem);
          if (u.text.length >= 5) {
            const padded = `<${u.text}>`;
            for (let i = 0; i + 3 <= padded.length; i++) add(fnv(SEED.trigram, padded.slice(i, i + 3)), WEIGHT.trigram);
          }
        }
        if (previous && !previous.cjk) add(fnv(fnv(SEED.bigram, previous.text), ` ${u.text}`), WEIGHT.bigram);
      }
      previous = u;
    }
    return this.project(features);
  }

  /** Signed hashing with sublinear weights, then unit length. */
  private project(features: Map<number, [number, number]>): Float32Array {
    const v = new Float32Array(this.dimensions);
    for (const [hash, [weight, count]] of features) {
      const mixed = Math.imul(hash ^ (hash >>> 16), 0x45d9f3b);
      const bucket = (mixed >>> 1) % this.dimensions;
      const sign = (mixed & 1) === 0 ? 1 : -1;
      v[bucket] = (v[bucket] ?? 0) + sign * weight * (1 + Math.log(count));
    }
    let norm = 0;
    for (let i = 0; i < v.length; i++) norm += (v[i] ?? 0) ** 2;
    if (norm === 0) return v;
    const scale = 1 / Math.sqrt(norm);
    for (let i = 0; i < v.length; i++) v[i] = (v[i] ?? 0) * scale;
    return v;
  }
}
