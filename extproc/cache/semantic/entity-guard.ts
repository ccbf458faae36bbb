/**
 * The entity guard: two questions close in embedding space may still ask about different things
 * ("flights to Paris on Monday" / "flights to Rome on Monday", "2 + 2" / "2 + 3"). Their key
 * entities must agree before an answer is reused:
 *
 * - numbers (digits, English number words two…twenty, Chinese numerals), with their currency or
 *   unit when one is attached ("$5", "5 km", "5公里"): the same set on both sides;
 * - dates and times: weekdays, months, today / tomorrow / yesterday / tonight, this / next / last
 *   week, month, year, 今天 / 明天 / 周一 / 下周… (English and Chinese map to one form): the same set;
 * - quoted strings, code identifiers (snake_case, camelCase, dotted.paths, `backticks`), URLs and
 *   emails: the same set;
 * - names: capitalised words not at a sentence start, acronyms and mixed-case words (PyTorch),
 *   Latin words inside Chinese text: each side's names must occur in the other's text (so a
 *   lower-cased mention still agrees).
 *
 * Pure and synchronous; the extraction is a few regular expressions over the question.
 */

export interface Entities {
  numbers: string[];
  times: string[];
  /** Quoted strings, code identifiers, URLs, emails. */
  literals: string[];
  /** Lower-cased names. */
  names: string[];
}

export type GuardVerdict = { ok: true } | { ok: false; reason: "numbers" | "times" | "literals" | "names" };

const URL_RE = /\bhttps?:\/\/[^\s"'<>`]+/gi;
const EMAIL_RE = /\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b/g;
const QUOTED_RE = /"([^"\n]{1,80})"|“([^”\n]{1,80})”|「([^」\n]{1,80})」|`([^`\n]{1,80})`/g;
const CODE_RE = /\b(?:[a-z_]\w*_\w+|[a-z]{2,}[A-Z][a-z]\w*|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?|\w+\(\))/g;
const UNIT =
  "(?:%|percent|km|kilomet(?:er|re)s?|m|meters?|metres?|cm|mm|miles?|kg|g|grams?|lbs?|pounds?|kb|mb|gb|tb|ms|s|sec(?:ond)?s?|min(?:ute)?s?|h|hours?|days?|weeks?|months?|years?|usd|eur|rmb|yuan|dollars?|euros?|°c|°f|元|块|岁|年|月|日|号|天|小时|分钟|秒|公里|米|斤|公斤|克|个|次|点)";
const NUMBER_RE = new RegExp(`([$€£¥])?\\s?(\\d+(?:[.,]\\d+)*)(?:\\s?(${UNIT})(?![a-z]))?`, "gi");
const ZH_NUMERAL_RE = /[零〇一二两三四五六七八九十百千万亿]+/g;
const WORD_NUMBERS: Record<string, number> = {
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  twenty: 20,
  thirty: 30,
  hundred: 100,
  thousand: 1000,
  million: 1e6,
  billion: 1e9,
};
const WORD_NUMBER_RE = new RegExp(`\\b(${Object.keys(WORD_NUMBERS).join("|")})\\b(?:\\s?(${UNIT})(?![a-z]))?`, "gi");
/** Numeral runs that are words, not numbers: 千万 "by all means", 万一 "in case", 一一 "one by one". */
const ZH_NOT_NUMBERS = new Set(["一", "千万", "万一", "一一", "万"]);

/** Time words and their one form, English and Chinese. */
const TIME_WORDS: [RegExp, string][] = [
  [/\btoday\b|今天|今日/i, "day+0"],
  [/\btomorrow\b|明天|明日/i, "day+1"],
  [/\byesterday\b|昨天|昨日/i, "day-1"],
  [/后天/, "day+2"],
  [/前天/, "day-2"],
  [/\btonight\b|今晚|今夜/i, "night+0"],
  [/\bthis (week|month|year)\b|(本|这)(周|星期|个?月)|今年/i, "this"],
  [/\bnext (week|month|year)\b|下(周|星期|个?月)|明年/i, "next"],
  [/\blast (week|month|year)\b|上(周|星期|个?月)|去年/i, "last"],
  [/\b(monday|mon)\b|(周|星期|礼拜)一/i, "mon"],
  [/\b(tuesday|tue)\b|(周|星期|礼拜)二/i, "tue"],
  [/\b(wednesday|wed)\b|(周|星期|礼拜)三/i, "wed"],
  [/\b(thursday|thu)\b|(周|星期|礼拜)四/i, "thu"],
  [/\b(friday|fri)\b|(周|星期|礼拜)五/i, "fri"],
  [/\b(saturday|sat)\b|(周|星期|礼拜)六/i, "sat"],
  [/\b(sunday|sun)\b|(周|星期|礼拜)[日天]/i, "sun"],
  [/\b(weekend)\b|周末/i, "weekend"],
  [/\b(morning)\b|早上|上午/i, "morning"],
  [/\b(afternoon)\b|下午/i, "afternoon"],
  [/\b(evening)\b|晚上/i, "evening"],
];
const MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];
const MONTH_RE = /\b(january|february|march|april|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\b/gi;

/** Capitalised words that are ordinary words wherever they stand. */
const NOT_NAMES = new Set([
  "i",
  "i'm",
  "i've",
  "i'd",
  "i'll",
  "ok",
  "okay",
  "mr",
  "mrs",
  "ms",
  "dr",
  "monday",
  "tuesday",
  "wednesday",
  "thursday",
  "friday",
  "saturday",
  "sunday",
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december",
]);

export function extractEntities(text: string): Entities {
  const literals = new Set<string>();
  let rest = text;
  for (const re of [URL_RE, EMAIL_RE]) {
    rest = rest.replace(re, (m) => {
      literals.add(m.toLowerCase().replace(/[.,;:!?)]+$/, ""));
      return " ";
    });
  }
  for (const m of rest.matchAll(QUOTED_RE)) literals.add((m[1] ?? m[2] ?? m[3] ?? m[4] ?? "").trim().toLowerCase());
  for (const m of rest.matchAll(CODE_RE)) if (!/^\d/.test(m[0]) && !/^(e\.g|i\.e|etc)\b/i.test(m[0])) literals.add(m[0]);
  return { numbers: numbersOf(rest), times: timesOf(rest), literals: [...literals].sort(), names: namesOf(rest) };
}

function numbersOf(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(NUMBER_RE)) {
    const value = (m[2] ?? "").replace(/,(?=\d{3}\b)/g, "");
    out.add(`${m[1] ?? ""}${Number.isFinite(Number(value)) ? String(Number(value)) : value}${(m[3] ?? "").toLowerCase().replace(/s$/, "")}`);
  }
  for (const m of text.matchAll(WORD_NUMBER_RE)) out.add(`${WORD_NUMBERS[(m[1] ?? "").toLowerCase()]}${(m[2] ?? "").toLowerCase().replace(/s$/, "")}`);
  for (const m of text.matchAll(ZH_NUMERAL_RE)) {
    const run = m[0];
    // A lone 一 is mostly "a / one / the same" (一个, 一下, 统一); 周一 is a weekday (a time).
    if (ZH_NOT_NUMBERS.has(run) || /[周期拜]$/.test(text.slice(0, m.index))) continue;
    const value = chineseNumber(run);
    if (value !== undefined) out.add(String(value));
  }
  return [...out].sort();
}

const ZH_DIGITS: Record<string, number> = { 零: 0, 〇: 0, 一: 1, 二: 2, 两: 2, 三: 3, 四: 4, 五: 5, 六: 6, 七: 7, 八: 8, 九: 9 };
const ZH_UNITS: Record<string, number> = { 十: 10, 百: 100, 千: 1000, 万: 1e4, 亿: 1e8 };

/** 三 → 3, 十五 → 15, 二百零五 → 205, 三万 → 30000; digit strings (一九八四) read digit by digit. */
export function chineseNumber(run: string): number | undefined {
  if (![...run].some((c) => ZH_UNITS[c] !== undefined)) {
    return Number([...run].map((c) => ZH_DIGITS[c] ?? 0).join(""));
  }
  let total = 0;
  let section = 0;
  let digit = 0;
  for (const c of run) {
    const d = ZH_DIGITS[c];
    if (d !== undefined) {
      digit = d;
      continue;
    }
    const unit = ZH_UNITS[c] ?? 1;
    if (unit >= 1e4) {
      total += (section + digit) * unit;
      section = 0;
    } else section += (digit === 0 && unit === 10 ? 1 : digit) * unit;
    digit = 0;
  }
  return total + section + digit;
}

function timesOf(text: string): string[] {
  const out = new Set<string>();
  for (const [re, form] of TIME_WORDS) if (re.test(text)) out.add(form);
  for (const m of text.matchAll(MONTH_RE)) {
    const word = (m[1] ?? "").toLowerCase();
    // "may" is a month only when capitalised ("in May"), else a verb.
    out.add(MONTHS.find((name) => name.startsWith(word.slice(0, 3))) ?? word);
  }
  if (/\bMay\b/.test(text) && !/^May\b|[.?!]\s+May\b/.test(text)) out.add("may");
  return [...out].sort();
}

function namesOf(text: string): string[] {
  const out = new Set<string>();
  const cjk = /[\u4e00-\u9fff]/.test(text);
  for (const m of text.matchAll(/[\p{Script=Latin}\p{N}][\p{Script=Latin}\p{N}'’-]*/gu)) {
    const word = m[0];
    const at = m.index;
    if (!/[A-Za-z]/.test(word) || NOT_NAMES.has(word.toLowerCase())) continue;
    const sentenceStart = /(^|[.?!。？！:：\n]\s*|^\s*["“(]?)$/.test(text.slice(Math.max(0, at - 3), at)) || at === 0;
    const acronym = /^[A-Z]{2,}\d*s?$/.test(word) || /[a-z][A-Z]/.test(word) || /[A-Za-z]\d|\d[A-Za-z]/.test(word);
    const capitalised = /^[A-Z]/.test(word) && !sentenceStart;
    const latinInChinese = cjk && word.length >= 2 && /^[A-Za-z]/.test(word);
    if (acronym || capitalised || latinInChinese) out.add(word.toLowerCase().replace(/['’]s$/, ""));
  }
  return [...out].sort();
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Every name of `names` occurs in `text` (case-insensitive, as a word in Latin text). */
function namesIn(names: readonly string[], lowerText: string): boolean {
  return names.every((n) => {
    const at = lowerText.indexOf(n);
    if (at < 0) return false;
    const before = lowerText.charCodeAt(at - 1);
    const after = lowerText.charCodeAt(at + n.length);
    return !isLatin(before) && !isLatin(after);
  });
}

function isLatin(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 48 && code <= 57);
}

/** Whether two questions' key entities agree (see the module comment for what "agree" is). */
export function entitiesAgree(a: Entities, textA: string, b: Entities, textB: string): GuardVerdict {
  if (!sameSet(a.numbers, b.numbers)) return { ok: false, reason: "numbers" };
  if (!sameSet(a.times, b.times)) return { ok: false, reason: "times" };
  if (!sameSet(a.literals, b.literals)) return { ok: false, reason: "literals" };
  if (!namesIn(a.names, textB.toLowerCase()) || !namesIn(b.names, textA.toLowerCase())) return { ok: false, reason: "names" };
  return { ok: true };
}

/** `entitiesAgree` over two raw questions. */
export function guard(textA: string, textB: string): GuardVerdict {
  return entitiesAgree(extractEntities(textA), textA, extractEntities(textB), textB);
}
