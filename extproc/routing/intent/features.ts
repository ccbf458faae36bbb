/**
 * Hashed character n-gram features shared by training (`bench/intent/train.ts`) and inference
 * (`linear.ts`). Text is lowercased, whitespace runs collapse to one space, every ASCII digit
 * becomes `0`, and only the first 400 and last 150 characters are read. Every n-gram of length
 * 1–4 is hashed (FNV-1a, then a multiply-shift finaliser) into `2^BUCKET_BITS` buckets.
 */

export const BUCKET_BITS = 14;
export const HEAD_CHARS = 400;
export const TAIL_CHARS = 150;
export const MAX_NGRAM = 4;

const WINDOW = HEAD_CHARS + TAIL_CHARS + 3;
/** Upper bound on the n-grams one text yields; size of the buffer `hashNgrams` fills. */
export const MAX_FEATURES = WINDOW * MAX_NGRAM;

const codes = new Uint16Array(WINDOW);

function window(text: string): string {
  return text.length <= HEAD_CHARS + TAIL_CHARS ? text : `${text.slice(0, HEAD_CHARS)}\n${text.slice(-TAIL_CHARS)}`;
}

/**
 * Writes the bucket of every n-gram of `text` into `out` (at least `MAX_FEATURES` long) and
 * returns how many it wrote. Repeated n-grams repeat their bucket, so counts are implicit.
 */
export function hashNgrams(text: string, out: Int32Array): number {
  const src = window(text).toLowerCase();
  const shift = 32 - BUCKET_BITS;
  let len = 0;
  codes[len++] = 32;
  for (let i = 0; i < src.length; i++) {
    let c = src.charCodeAt(i);
    if (c <= 32) c = 32;
    else if (c >= 48 && c <= 57) c = 48;
    if (c === 32 && codes[len - 1] === 32) continue;
    codes[len++] = c;
  }
  if (codes[len - 1] !== 32) codes[len++] = 32;
  if (len <= 1) return 0;
  let n = 0;
  for (let i = 0; i < len; i++) {
    let h = 0x811c9dc5;
    const end = Math.min(len, i + MAX_NGRAM);
    for (let j = i; j < end; j++) {
      h = Math.imul(h ^ (codes[j] ?? 0), 16777619);
      out[n++] = Math.imul(h ^ (h >>> 15), 0x85ebca6b) >>> shift;
    }
  }
  return n;
}
