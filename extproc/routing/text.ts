/**
 * One pass over a prompt, shared by the readers of the routing decision: the intent patterns
 * (`intent/keywords.ts`), the intent model (`intent/features.ts`) and the complexity markers
 * (`complexity.ts`). A long text is read on its head and tail only (`TEXT_HEAD` + `TEXT_TAIL`
 * characters: instructions sit at the start or the end of a prompt, and a long pasted middle says
 * little more); that window is lowercased once and split once into units: ASCII words (runs of
 * `[a-z0-9_]`, exactly the words a regular expression's `\b` delimits), CJK characters, and any
 * other visible character. Each unit gets a hash (FNV-1a, every digit read as `0`); the pass also
 * counts the Latin-1 characters outside words, visible and CJK characters, ASCII letters and
 * numbers. Words that a reader looks up are resolved once to `LEXICON` ids.
 *
 * `analyseText` keeps its last two results, so the intent classifier and the complexity estimate
 * of one request share one pass. A view is overwritten by later calls: read it, don't keep it.
 */

/** How much of a long text the pass reads: its first and last characters. */
export const TEXT_HEAD = 600;
export const TEXT_TAIL = 200;

/** Characters of a word's prefix that the pass hashes (`TextView.prefixHashes`). */
export const PREFIX = 5;

/** Unit kinds. */
export const UNIT_WORD = 1;
export const UNIT_CJK = 2;
export const UNIT_MARK = 3;

/** Lowercasing can lengthen a string (`İ` → `i̇`): room for that, and a bound on the units. */
const CAPACITY = 2 * (TEXT_HEAD + TEXT_TAIL + 1);

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 16777619;

// Character classes, one table over the Basic Multilingual Plane.
const SPACE = 0;
const LETTER = 1;
const DIGIT = 2;
const UNDERSCORE = 3;
const MARK = 4;
const CJK = 5;

export function isCjk(code: number): boolean {
  return (
    (code >= 0x4e00 && code <= 0x9fff) ||
    (code >= 0x3400 && code <= 0x4dbf) ||
    (code >= 0x3040 && code <= 0x30ff) ||
    (code >= 0xac00 && code <= 0xd7af) ||
    (code >= 0xf900 && code <= 0xfaff)
  );
}

/** A character that separates units: ASCII space or control, or JavaScript's `\s` beyond ASCII. */
export function isSpace(code: number): boolean {
  if (code <= 32) return true;
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

function classOf(code: number): number {
  if ((code >= 97 && code <= 122) || (code >= 65 && code <= 90)) return LETTER;
  if (code >= 48 && code <= 57) return DIGIT;
  if (code === 95) return UNDERSCORE;
  if (isSpace(code)) return SPACE;
  return isCjk(code) ? CJK : MARK;
}

const CLASS = Uint8Array.from({ length: 0x10000 }, (_, code) => classOf(code));

/** A character of `\w`: ASCII letter, digit or underscore. */
export function isWordChar(code: number): boolean {
  const k = CLASS[code] ?? MARK;
  return k === LETTER || k === DIGIT || k === UNDERSCORE;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** The hash of `text[start, end)` as the pass computes a unit's (digits read as `0`). */
export function hashRange(text: string, start: number, end: number): number {
  let h = FNV_OFFSET;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    h = Math.imul(h ^ (isDigit(c) ? 48 : c), FNV_PRIME);
  }
  return h | 0;
}

/**
 * The words the readers of the pass look up (pattern gates, complexity markers), each with an
 * id. A reader adds its words when its module loads; a view resolves its words to ids once
 * (`TextView.wordIds`), for every reader. Lookups go through an open-addressing table of hashes,
 * built on first use after words were added, and compare characters only on a hash hit.
 */
export class Lexicon {
  private readonly words: string[] = [];
  private readonly ids = new Map<string, number>();
  private shift = 32;
  private mask = 0;
  /** Pairs of (hash, id + 1); id + 1 = 0 marks an empty slot. */
  private table = new Int32Array(2);
  /** How many words the table holds. */
  private built = 0;

  get size(): number {
    return this.words.length;
  }

  /** The id of `word`, added if new. */
  add(word: string): number {
    let id = this.ids.get(word);
    if (id === undefined) {
      id = this.words.length;
      this.words.push(word);
      this.ids.set(word, id);
    }
    return id;
  }

  /** The id of the word `text[start, end)`, whose `hashRange` is `hash`, or -1. */
  find(text: string, start: number, end: number, hash: number): number {
    if (this.built !== this.words.length) this.build();
    const table = this.table;
    for (let slot = Math.imul(hash, 0x9e3779b1) >>> this.shift; ; slot = (slot + 1) & this.mask) {
      const entry = table[2 * slot + 1] ?? 0;
      if (entry === 0) return -1;
      if (table[2 * slot] !== hash) continue;
      const word = this.words[entry - 1] ?? "";
      if (word.length === end - start && text.startsWith(word, start)) return entry - 1;
    }
  }

  /** A table at most a quarter full, hash and id side by side (one cache line per probe). */
  private build(): void {
    let bits = 4;
    while (1 << bits < this.words.length * 4) bits++;
    this.shift = 32 - bits;
    this.mask = (1 << bits) - 1;
    this.table = new Int32Array(2 << bits);
    this.words.forEach((word, id) => {
      const h = hashRange(word, 0, word.length);
      let slot = Math.imul(h, 0x9e3779b1) >>> this.shift;
      while (this.table[2 * slot + 1] !== 0) slot = (slot + 1) & this.mask;
      this.table[2 * slot] = h;
      this.table[2 * slot + 1] = id + 1;
    });
    this.built = this.words.length;
  }
}

/** The words every reader of the pass looks up. */
export const LEXICON = new Lexicon();

/** The analysis of one text. Fields are filled by `analyseText`; consumers only read them. */
export class TextView {
  /** The analysed text, as given. */
  text = "";
  /** Its lowercased window: the whole text, or its head, a newline and its tail. */
  lower = "";
  /** Whether the window left out the middle of the text. */
  cut = false;
  /** Number of units; unit `u` spans `lower[starts[u], ends[u])`. */
  units = 0;
  readonly starts = new Int32Array(CAPACITY);
  readonly ends = new Int32Array(CAPACITY);
  readonly hashes = new Int32Array(CAPACITY);
  readonly kinds = new Uint8Array(CAPACITY);
  /** For a word of at least `PREFIX` characters, the `hashRange` of its first `PREFIX`. */
  readonly prefixHashes = new Int32Array(CAPACITY);
  /** Occurrences of each Latin-1 character (code < 256) outside words in the window. */
  readonly latin1 = new Uint16Array(256);
  /** In the window: characters above U+0020, CJK characters, ASCII letters, and matches of `\d+(\.\d+)?`. */
  visible = 0;
  cjk = 0;
  letters = 0;
  numbers = 0;
  private readonly ids = new Int32Array(CAPACITY);
  /** The lexicon size the ids were resolved for (they are again if words were added since). */
  private resolvedFor = 0;

  constructor() {
    this.analyse("");
  }

  analyse(text: string): void {
    const window = text.length <= TEXT_HEAD + TEXT_TAIL ? text : `${text.slice(0, TEXT_HEAD)}\n${text.slice(-TEXT_TAIL)}`;
    const lower = window.toLowerCase();
    this.text = text;
    this.cut = window !== text;
    this.lower = lower.length <= CAPACITY ? lower : lower.slice(0, CAPACITY);
    this.scan();
  }

  /** The `LEXICON` id of each unit: -1 for a unit that is not a word, or not a lexicon word. */
  wordIds(): Int32Array {
    if (this.resolvedFor !== LEXICON.size) {
      for (let u = 0; u < this.units; u++) this.ids[u] = this.kinds[u] === UNIT_WORD ? this.lookUp(u) : -1;
      this.resolvedFor = LEXICON.size;
    }
    return this.ids;
  }

  /** Splits `lower` into units, resolves its words' ids and counts characters, in one loop. */
  private scan(): void {
    const s = this.lower;
    const n = s.length;
    const latin1 = this.latin1;
    latin1.fill(0);
    let units = 0;
    let blanks = 0;
    let cjk = 0;
    let letters = 0;
    let numbers = 0;
    // Whether the last number may still take a fractional part (`1.5` is one number).
    let fractionOpen = false;
    let i = 0;
    while (i < n) {
      const c = s.charCodeAt(i);
      const k = CLASS[c] ?? MARK;
      if (k === SPACE || k === MARK || k === CJK) {
        if (c < 256) latin1[c] = (latin1[c] ?? 0) + 1;
        if (k === CJK) cjk++;
        if (k !== SPACE) this.push(units++, i, i + 1, Math.imul(FNV_OFFSET ^ c, FNV_PRIME), k === CJK ? UNIT_CJK : UNIT_MARK);
        else if (c <= 32) blanks++;
        i++;
        continue;
      }
      const start = i;
      let h = FNV_OFFSET;
      for (; i < n; i++) {
        const d = s.charCodeAt(i);
        const kind = CLASS[d] ?? MARK;
        if (kind === LETTER) {
          letters++;
          h = Math.imul(h ^ d, FNV_PRIME);
        } else if (kind === DIGIT) {
          if (i === start || !isDigit(s.charCodeAt(i - 1))) {
            const fraction: boolean = fractionOpen && i >= 2 && s.charCodeAt(i - 1) === 46 && isDigit(s.charCodeAt(i - 2));
            if (!fraction) numbers++;
            fractionOpen = !fraction;
          }
          h = Math.imul(h ^ 48, FNV_PRIME);
        } else if (kind === UNDERSCORE) {
          h = Math.imul(h ^ d, FNV_PRIME);
        } else {
          break;
        }
        if (i - start === PREFIX - 1) this.prefixHashes[units] = h;
      }
      this.push(units, start, i, h, UNIT_WORD);
      this.ids[units] = this.lookUp(units);
      units++;
    }
    this.units = units;
    this.resolvedFor = LEXICON.size;
    this.visible = n - blanks;
    this.cjk = cjk;
    this.letters = letters;
    this.numbers = numbers;
  }

  private lookUp(u: number): number {
    return LEXICON.find(this.lower, this.starts[u] ?? 0, this.ends[u] ?? 0, this.hashes[u] ?? 0);
  }

  private push(u: number, start: number, end: number, hash: number, kind: number): void {
    this.starts[u] = start;
    this.ends[u] = end;
    this.hashes[u] = hash;
    this.kinds[u] = kind;
    this.ids[u] = -1;
  }
}

/** The two most recent analyses, newest first. */
const recent: [TextView, TextView] = [new TextView(), new TextView()];

/** The shared analysis of `text`; the last two texts analysed are remembered. */
export function analyseText(text: string): TextView {
  const [newest, older] = recent;
  if (newest.text === text) return newest;
  recent[0] = older;
  recent[1] = newest;
  if (older.text !== text) older.analyse(text);
  return older;
}
