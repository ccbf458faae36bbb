/**
 * Tokenizers for the ONNX engine's embedding and classifier models, read from a small JSON file
 * that goes with the model (`ModelSpec.tokenizer`). Two forms:
 *
 * ```json
 * {"type": "wordpiece", "vocab": {"[PAD]": 0, "[UNK]": 100, …}, "unk": "[UNK]", "cls": "[CLS]",
 *  "sep": "[SEP]", "pad": "[PAD]", "lowercase": true, "max_length": 128}
 * ```
 * BERT's WordPiece, as in Google's `tokenization.py` (BasicTokenizer + WordpieceTokenizer):
 * control characters dropped, whitespace normalized, CJK ideographs split apart, with
 * `lowercase` also lower-cased and accents stripped (NFD, marks removed), split on whitespace
 * and punctuation, then each word greedily matched longest-first against `vocab`, continuation
 * pieces prefixed `##`; a word with no match, or over 100 characters, becomes `unk`. The output
 * is `cls`, the pieces, `sep`, cut to `max_length` (the pieces are cut, `cls`/`sep` are kept).
 * Defaults: `unk` `[UNK]`, `cls` `[CLS]`, `sep` `[SEP]`, `pad` `[PAD]`, `lowercase` true,
 * `max_length` 512. (From a BERT `vocab.txt`: each line is a token, its 0-based line number its id.)
 *
 * ```json
 * {"type": "bytes", "offset": 3, "pad_id": 0, "bos_id": 1, "eos_id": 2, "max_length": 512}
 * ```
 * Byte-level: ids are the text's UTF-8 bytes plus `offset` (default 3: the ByT5 layout, whose
 * ids 0–2 are pad, eos, unk), optionally framed by `bos_id`/`eos_id` (none by default),
 * `pad_id` default 0, `max_length` default 512 (bytes are cut, the frame is kept).
 *
 * Parsing returns a result naming each bad field (it never throws).
 */

/** A parsed, checked tokenizer file. */
export type TokenizerConfig =
  | { type: "wordpiece"; vocab: ReadonlyMap<string, number>; unk: string; cls: string; sep: string; pad: string; lowercase: boolean; maxLength: number }
  | { type: "bytes"; offset: number; padId: number; bosId: number | undefined; eosId: number | undefined; maxLength: number };

/** Turns text into model input ids. */
export interface Tokenizer {
  /** The ids of one text, special tokens included, at most `maxLength` of them. */
  encode(text: string): number[];
  /** The id that fills a batch's shorter rows (masked out). */
  readonly padId: number;
  /** The most ids `encode` returns. */
  readonly maxLength: number;
}

/** The outcome of parsing a tokenizer file. */
export type TokenizerParseResult = { ok: true; value: TokenizerConfig } | { ok: false; errors: string[] };

/** Default `max_length` (BERT's position limit). */
export const DEFAULT_TOKENIZER_MAX_LENGTH = 512;
/** Default byte offset (ByT5). */
export const DEFAULT_BYTE_OFFSET = 3;
/** Longest word WordPiece tries to split; longer ones are `unk` (as in BERT). */
export const WORDPIECE_MAX_WORD_CHARS = 100;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const isId = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value) && value >= 0;

/** Reads an optional field, recording an error when present with the wrong type. */
function field<T>(raw: Record<string, unknown>, name: string, check: (v: unknown) => v is T, expected: string, fallback: T, errors: string[]): T {
  const value = raw[name];
  if (value === undefined) return fallback;
  if (check(value)) return value;
  errors.push(`${name}: expected ${expected}, got ${JSON.stringify(value)}`);
  return fallback;
}

const isString = (v: unknown): v is string => typeof v === "string" && v !== "";
const isBoolean = (v: unknown): v is boolean => typeof v === "boolean";
const isOptionalId = (v: unknown): v is number | undefined => isId(v);

function parseWordPiece(raw: Record<string, unknown>, errors: string[]): TokenizerConfig {
  const vocab = new Map<string, number>();
  if (!isRecord(raw.vocab)) errors.push("vocab: expected an object of token → id");
  else {
    for (const [token, id] of Object.entries(raw.vocab)) {
      if (isId(id)) vocab.set(token, id);
      else errors.push(`vocab[${JSON.stringify(token)}]: expected a non-negative integer id, got ${JSON.stringify(id)}`);
    }
    if (vocab.size === 0) errors.push("vocab: empty");
  }
  const unk = field(raw, "unk", isString, "a token", "[UNK]", errors);
  const cls = field(raw, "cls", isString, "a token", "[CLS]", errors);
  const sep = field(raw, "sep", isString, "a token", "[SEP]", errors);
  const pad = field(raw, "pad", isString, "a token", "[PAD]", errors);
  if (isRecord(raw.vocab)) {
    for (const [name, token] of [
      ["unk", unk],
      ["cls", cls],
      ["sep", sep],
      ["pad", pad],
    ] as const) {
      if (!vocab.has(token)) errors.push(`${name}: the token ${JSON.stringify(token)} is not in vocab`);
    }
  }
  const lowercase = field(raw, "lowercase", isBoolean, "true or false", true, errors);
  const maxLength = field(
    raw,
    "max_length",
    (v): v is number => isId(v) && v >= 3,
    "an integer ≥ 3 (room for cls and sep)",
    DEFAULT_TOKENIZER_MAX_LENGTH,
    errors,
  );
  return { type: "wordpiece", vocab, unk, cls, sep, pad, lowercase, maxLength };
}

function parseBytes(raw: Record<string, unknown>, errors: string[]): TokenizerConfig {
  const offset = field(raw, "offset", isId, "a non-negative integer", DEFAULT_BYTE_OFFSET, errors);
  const padId = field(raw, "pad_id", isId, "a non-negative integer", 0, errors);
  const bosId = field<number | undefined>(raw, "bos_id", isOptionalId, "a non-negative integer", undefined, errors);
  const eosId = field<number | undefined>(raw, "eos_id", isOptionalId, "a non-negative integer", undefined, errors);
  const frame = (bosId === undefined ? 0 : 1) + (eosId === undefined ? 0 : 1);
  const maxLength = field(
    raw,
    "max_length",
    (v): v is number => isId(v) && v > frame,
    `an integer > ${frame} (room for the frame)`,
    DEFAULT_TOKENIZER_MAX_LENGTH,
    errors,
  );
  return { type: "bytes", offset, padId, bosId, eosId, maxLength };
}

/** Checks a tokenizer file's JSON (see the module comment for the format). */
export function parseTokenizerConfig(json: unknown): TokenizerParseResult {
  if (!isRecord(json)) return { ok: false, errors: ["expected a JSON object"] };
  const errors: string[] = [];
  let value: TokenizerConfig;
  switch (json.type) {
    case "wordpiece":
      value = parseWordPiece(json, errors);
      break;
    case "bytes":
      value = parseBytes(json, errors);
      break;
    default:
      return { ok: false, errors: [`type: expected "wordpiece" or "bytes", got ${JSON.stringify(json.type)}`] };
  }
  return errors.length === 0 ? { ok: true, value } : { ok: false, errors };
}

/** BERT's `_is_chinese_char` ranges (CJK ideographs, which are split into single characters). */
const CJK =
  /[\u{4E00}-\u{9FFF}\u{3400}-\u{4DBF}\u{20000}-\u{2A6DF}\u{2A700}-\u{2B73F}\u{2B740}-\u{2B81F}\u{2B820}-\u{2CEAF}\u{F900}-\u{FAFF}\u{2F800}-\u{2FA1F}]/gu;
/** BERT's `_is_punctuation`: Unicode P* plus every non-alphanumeric ASCII symbol. */
const PUNCTUATION = /^[\p{P}!-/:-@[-`{-~]$/u;
/** Characters BERT's `_clean_text` drops: NUL, U+FFFD and control/format characters other than whitespace. */
const DROPPED = /[\0\uFFFD]|(?![\t\n\r])[\p{Cc}\p{Cf}]/gu;

/** BERT's BasicTokenizer: the words and punctuation marks of a text. */
export function basicTokens(text: string, lowercase: boolean): string[] {
  let clean = text
    .replace(DROPPED, "")
    .replace(/\s/gu, " ")
    .replace(CJK, (c) => ` ${c} `);
  if (lowercase)
    clean = clean
      .toLowerCase()
      .normalize("NFD")
      .replace(/\p{Mn}/gu, "");
  const out: string[] = [];
  for (const word of clean.split(" ")) {
    let current = "";
    for (const char of word) {
      if (PUNCTUATION.test(char)) {
        if (current !== "") out.push(current);
        out.push(char);
        current = "";
      } else current += char;
    }
    if (current !== "") out.push(current);
  }
  return out;
}

/** Greedy longest-match-first WordPiece of one word; `undefined` when some part has no piece. */
export function wordPieces(word: string, vocab: ReadonlyMap<string, number>): number[] | undefined {
  const chars = Array.from(word);
  if (chars.length > WORDPIECE_MAX_WORD_CHARS) return undefined;
  const ids: number[] = [];
  let start = 0;
  while (start < chars.length) {
    let end = chars.length;
    let found: number | undefined;
    for (; end > start; end -= 1) {
      const piece = (start > 0 ? "##" : "") + chars.slice(start, end).join("");
      found = vocab.get(piece);
      if (found !== undefined) break;
    }
    if (found === undefined) return undefined;
    ids.push(found);
    start = end;
  }
  return ids;
}

function idOf(vocab: ReadonlyMap<string, number>, token: string): number {
  const id = vocab.get(token);
  if (id === undefined) throw new Error(`Tokenizer config was not checked: ${token} is not in vocab`);
  return id;
}

/** A tokenizer for a checked config. */
export function createTokenizer(config: TokenizerConfig): Tokenizer {
  switch (config.type) {
    case "wordpiece": {
      const { vocab, lowercase, maxLength } = config;
      const [unk, cls, sep, pad] = [config.unk, config.cls, config.sep, config.pad].map((token) => idOf(vocab, token)) as [number, number, number, number];
      return {
        padId: pad,
        maxLength,
        encode(text) {
          const ids: number[] = [];
          for (const word of basicTokens(text, lowercase)) {
            ids.push(...(wordPieces(word, vocab) ?? [unk]));
            if (ids.length >= maxLength - 2) break;
          }
          return [cls, ...ids.slice(0, maxLength - 2), sep];
        },
      };
    }
    case "bytes": {
      const { offset, bosId, eosId, maxLength } = config;
      const head = bosId === undefined ? [] : [bosId];
      const tail = eosId === undefined ? [] : [eosId];
      const room = maxLength - head.length - tail.length;
      return {
        padId: config.padId,
        maxLength,
        encode(text) {
          const bytes = Buffer.from(text, "utf8").subarray(0, room);
          return [...head, ...Array.from(bytes, (b) => b + offset), ...tail];
        },
      };
    }
    default: {
      const never: never = config;
      throw new Error(`Unknown tokenizer type ${JSON.stringify(never)}`);
    }
  }
}
