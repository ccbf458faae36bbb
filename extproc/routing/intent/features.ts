/**
 * The intent model's features, shared by training (`bench/intent/train.ts`) and inference
 * (`linear.ts`). They come from the shared text pass (`../text.ts`: lowercased, digits read as
 * `0`). Of its units (ASCII words, CJK characters, other visible characters), the first
 * `HEAD_UNITS` and the last `TAIL_UNITS` are read: each unit is a unigram feature and a bigram
 * with the unit before it (the first one with a start-of-text marker). The first `HEAD_CHARS`
 * characters (a whitespace run counts as one space) also give their character trigrams, which
 * carry the opening words' spelling: how a request starts says much of its intent. Each feature
 * is hashed into `2^BUCKET_BITS` buckets.
 */
import { type TextView, analyseText, isSpace } from "../text.ts";

export const BUCKET_BITS = 13;
export const HEAD_UNITS = 80;
export const TAIL_UNITS = 32;
export const HEAD_CHARS = 40;
/** Upper bound on the features of one text; size of the buffer `unitFeatures` fills. */
export const MAX_FEATURES = 2 * (HEAD_UNITS + TAIL_UNITS) + HEAD_CHARS;

const SHIFT = 32 - BUCKET_BITS;
const START = 0x2f1b3c5d;

function bucket(h: number): number {
  return Math.imul(h ^ (h >>> 15), 0x85ebca6b) >>> SHIFT;
}

function bigram(before: number, h: number): number {
  return Math.imul(Math.imul(before, 0x9e3779b1) ^ h, 0x27d4eb2f);
}

/**
 * Writes the bucket of every feature of `view` into `out` (at least `MAX_FEATURES` long) and
 * returns how many it wrote. Repeated features repeat their bucket, so counts are implicit.
 */
export function unitFeatures(view: TextView, out: Int32Array): number {
  const tailStart = Math.max(HEAD_UNITS, view.units - TAIL_UNITS);
  let n = 0;
  let before = START;
  // After the head, jump to the tail (`tailStart` is `HEAD_UNITS` when the text is short).
  for (let u = 0; u < view.units; u = u === HEAD_UNITS - 1 ? tailStart : u + 1) {
    const h = view.hashes[u] ?? 0;
    out[n++] = bucket(h);
    out[n++] = bucket(bigram(before, h));
    before = h;
  }
  return n + headTrigrams(view.lower, out, n);
}

/** Writes the trigram buckets of the first `HEAD_CHARS` characters of `lower` from `out[from]`; returns how many. */
function headTrigrams(lower: string, out: Int32Array, from: number): number {
  let n = 0;
  let a = 32;
  let b = 32;
  for (let i = 0; i < lower.length && n < HEAD_CHARS; i++) {
    let c = lower.charCodeAt(i);
    if (isSpace(c)) c = 32;
    else if (c >= 48 && c <= 57) c = 48;
    if (c === 32 && b === 32) continue;
    out[from + n++] = bucket(trigram(a, b, c));
    a = b;
    b = c;
  }
  return n;
}

/** FNV-1a of three character codes, salted apart from a three-letter word's hash. */
function trigram(a: number, b: number, c: number): number {
  return Math.imul(Math.imul(Math.imul(0x3c6ef372 ^ a, 16777619) ^ b, 16777619) ^ c, 16777619);
}

/** `unitFeatures` of `text` (through the shared pass). */
export function textFeatures(text: string, out: Int32Array): number {
  return unitFeatures(analyseText(text), out);
}
