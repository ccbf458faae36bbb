/**
 * The data boundary's detectors: where a text carries values that must not leave as they are.
 * One pass of one combined regular expression finds candidates; each candidate is then checked
 * by its category's validator (Luhn for cards, the ISO 7064 check digit of a Chinese resident ID,
 * mod-97 for an IBAN, `net.isIP` for addresses, character entropy for unprefixed tokens), so
 * order numbers, dates, version strings and hashes fall out. Per-tenant keywords and patterns
 * and confidential markers are a second, plain scan. Names and street addresses are not
 * detected (see the README's data-boundary section).
 */
import { isIPv4, isIPv6 } from "node:net";

/** What a detected value is. */
export type Category = "email" | "phone" | "national_id" | "bank_card" | "iban" | "ip" | "secret" | "keyword" | "marker";

export const CATEGORIES: readonly Category[] = ["email", "phone", "national_id", "bank_card", "iban", "ip", "secret", "keyword", "marker"];

/** The groups a policy names; a category's own key overrides its group's. */
export const GROUPS = {
  pii: ["email", "phone", "national_id", "bank_card", "iban", "ip"],
  secrets: ["secret"],
  confidential: ["keyword", "marker"],
} as const satisfies Record<string, readonly Category[]>;

export interface Detection {
  category: Category;
  start: number;
  end: number;
}

/** Per-tenant additions: keywords (case-insensitive, whole text) and regular expressions, both `keyword`. */
export interface CustomRules {
  keywords: readonly string[];
  patterns: readonly RegExp[];
  markers: readonly string[];
}

// Candidates, in the order they win at one position. Named groups would cost a lookup per match:
// the group's index says the category.
const SOURCES: [Category | "cn_id" | "ssn" | "ipv6" | "token", string][] = [
  // Known key and token shapes (OpenAI, Anthropic, AWS, GitHub, Slack, Google, GitLab, Stripe, JWT, PEM).
  [
    "secret",
    String.raw`(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|glpat-[A-Za-z0-9_-]{20}|[rs]k_(?:live|test)_[A-Za-z0-9]{16,}|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----)`,
  ],
  ["iban", String.raw`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b`],
  ["cn_id", String.raw`(?<![\dA-Za-z])\d{17}[\dXx](?![\dA-Za-z])`],
  ["ssn", String.raw`(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])`],
  ["bank_card", String.raw`(?<![\d-])(?:\d{4}[ -]?){3}\d{1,7}(?![\d-])`],
  // Chinese mobile (+86 optional), then international numbers written with `+`, then North American (xxx) xxx-xxxx.
  [
    "phone",
    String.raw`(?=[\d+(])(?:(?<![\d+])(?:(?:\+|00)86[ -]?)?1[3-9]\d[ -]?\d{4}[ -]?\d{4}(?!\d)|(?<![\w+])\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){2,4}(?!\d)|(?<![\w-])\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}(?![\d-]))`,
  ],
  ["ip", String.raw`(?<![\w.])(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}(?![\w.]|\.\d)`],
  ["ipv6", String.raw`(?<![\w:.])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?![\w:])`],
  // Unprefixed tokens: long runs of key characters, kept only when they look random (below).
  ["token", String.raw`(?<![\w-])[A-Za-z0-9_-]{24,}(?![\w-])`],
];

const COMBINED = new RegExp(SOURCES.map(([, s]) => `(${s})`).join("|"), "g");
const KINDS = SOURCES.map(([k]) => k);
// Cheap gate: no digit, '@', run of key characters (an AWS key id is 20) or PEM header → nothing structured can be in the text.
const MAYBE = /[\d@]|[A-Za-z0-9_-]{20}|-----BEGIN/;

const VERSION_BEFORE = /(?:version|ver\.?|build|release|v)[ :]*$/i;
const LOCAL = /[A-Za-z0-9._%+-]/;
const DOMAIN = /^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/;

/** E-mail addresses, found from each `@` outwards (a regex trying every position costs 20 µs on 2 KB). */
function emails(text: string, out: Detection[]): void {
  for (let at = text.indexOf("@"); at >= 0; at = text.indexOf("@", at + 1)) {
    let start = at;
    while (start > 0 && LOCAL.test(text[start - 1]!)) start--;
    if (start === at) continue;
    const domain = DOMAIN.exec(text.slice(at + 1, at + 256));
    if (!domain) continue;
    out.push({ category: "email", start, end: at + 1 + domain[0].length });
    at += domain[0].length;
  }
}

/** Structured values in `text`, in order, non-overlapping. Throws only on a bug (the caller fails closed). */
export function detectStructured(text: string, out: Detection[] = []): Detection[] {
  if (!MAYBE.test(text)) return out;
  const mails = text.includes("@") ? (emails(text, out), out.length) : 0;
  COMBINED.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = COMBINED.exec(text)) !== null) {
    let i = 1;
    while (m[i] === undefined) i++;
    const value = m[0];
    const kind = KINDS[i - 1]!;
    // A dotted quad after "version"/"build"/"v" is a version string, not an address.
    if (kind === "ip" && VERSION_BEFORE.test(text.slice(Math.max(0, m.index - 10), m.index))) continue;
    const category = validated(kind, value);
    if (category) out.push({ category, start: m.index, end: m.index + value.length });
  }
  if (mails > 0) return mergeEmails(out, mails);
  return out;
}

/** `out`'s first `mails` entries (e-mails) merged into the rest by position; a match inside an e-mail (its digits) dropped. */
function mergeEmails(out: Detection[], mails: number): Detection[] {
  const rest = out.splice(mails);
  const merged: Detection[] = [];
  let i = 0;
  for (const d of rest) {
    while (i < out.length && out[i]!.start <= d.start) merged.push(out[i++]!);
    const last = merged.at(-1);
    if (last && d.start < last.end) continue;
    const next = out[i];
    if (next && next.start < d.end) continue;
    merged.push(d);
  }
  while (i < out.length) merged.push(out[i++]!);
  out.length = 0;
  out.push(...merged);
  return out;
}

function validated(kind: (typeof KINDS)[number], v: string): Category | undefined {
  switch (kind) {
    case "cn_id":
      return residentIdValid(v) ? "national_id" : undefined;
    case "ssn":
      return ssnValid(v) ? "national_id" : undefined;
    case "bank_card":
      return bankCardValid(v) ? "bank_card" : undefined;
    case "iban":
      return ibanValid(v) ? "iban" : undefined;
    case "ip":
      return isIPv4(v) ? "ip" : undefined;
    case "ipv6":
      return v.length >= 6 && isIPv6(v) ? "ip" : undefined;
    case "token":
      return looksRandom(v) ? "secret" : undefined;
    case "email":
    case "phone":
    case "secret":
    case "national_id":
    case "keyword":
    case "marker":
      return kind;
    default:
      return kind satisfies never;
  }
}

const ID_WEIGHTS = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2];
const ID_CHECK = "10X98765432";

/** GB 11643-1999: 6-digit region, birth date, sequence, ISO 7064 MOD 11-2 check character. */
export function residentIdValid(v: string): boolean {
  if (v.length !== 18 || v[0] === "0") return false;
  const year = Number(v.slice(6, 10));
  const month = Number(v.slice(10, 12));
  const day = Number(v.slice(12, 14));
  if (year < 1900 || year > 2100 || month < 1 || month > 12 || day < 1 || day > 31) return false;
  let sum = 0;
  for (let i = 0; i < 17; i++) sum += (v.charCodeAt(i) - 48) * ID_WEIGHTS[i]!;
  return ID_CHECK[sum % 11] === v[17]!.toUpperCase();
}

/** US SSN: area not 000, 666 or 9xx; group not 00; serial not 0000. */
export function ssnValid(v: string): boolean {
  const area = v.slice(0, 3);
  return area !== "000" && area !== "666" && area[0] !== "9" && v.slice(4, 6) !== "00" && v.slice(7) !== "0000";
}

/** A payment card: 13–19 digits, a known network's prefix (Visa, Mastercard, Amex, Discover, UnionPay, JCB, Diners), Luhn. */
export function bankCardValid(v: string): boolean {
  const digits = v.replace(/[ -]/g, "");
  if (digits.length < 13 || digits.length > 19) return false;
  if (!/^(?:4|5[1-5]|2[2-7]|3[47]|3[0689]|6(?:011|2|4[4-9]|5)|35)/.test(digits)) return false;
  let sum = 0;
  for (let i = digits.length - 1, double = false; i >= 0; i--, double = !double) {
    let d = digits.charCodeAt(i) - 48;
    if (double && (d *= 2) > 9) d -= 9;
    sum += d;
  }
  return sum % 10 === 0;
}

/** ISO 13616: country, check digits, BBAN; valid when the rearranged number mod 97 is 1. */
export function ibanValid(v: string): boolean {
  const s = v.replace(/ /g, "");
  if (s.length < 15 || s.length > 34) return false;
  const r = s.slice(4) + s.slice(0, 4);
  let rem = 0;
  for (let i = 0; i < r.length; i++) {
    const c = r.charCodeAt(i);
    if (c >= 48 && c <= 57) rem = (rem * 10 + c - 48) % 97;
    else if (c >= 65 && c <= 90) rem = (rem * 100 + c - 55) % 97;
    else return false;
  }
  return rem === 1;
}

/**
 * A token with no known prefix counts as a secret when it mixes upper case, lower case and digits
 * and its characters are spread (Shannon entropy ≥ 4 bits). Pure hex (hashes, UUIDs) and words
 * joined by `_`/`-` (identifiers) do not.
 */
export function looksRandom(v: string): boolean {
  if (/^[0-9a-fA-F-]+$/.test(v)) return false;
  if (!/[a-z]/.test(v) || !/[A-Z]/.test(v) || !/\d/.test(v)) return false;
  const counts = new Map<string, number>();
  for (const c of v) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / v.length;
    h -= p * Math.log2(p);
  }
  return h >= 4;
}

/** Default confidential markers: a document that says so about itself. */
export const DEFAULT_MARKERS = ["CONFIDENTIAL", "STRICTLY CONFIDENTIAL", "INTERNAL ONLY", "DO NOT DISTRIBUTE", "机密", "绝密", "内部资料", "内部文件", "秘密"];

/** Keywords, custom patterns (category `keyword`) and markers (`marker`) in `text`. */
export function detectCustom(text: string, rules: CustomRules, out: Detection[] = []): Detection[] {
  if (rules.keywords.length > 0) {
    const lower = text.toLowerCase();
    for (const k of rules.keywords) {
      const needle = k.toLowerCase();
      for (let at = lower.indexOf(needle); at >= 0; at = lower.indexOf(needle, at + needle.length))
        out.push({ category: "keyword", start: at, end: at + needle.length });
    }
  }
  for (const p of rules.patterns) {
    p.lastIndex = 0;
    for (const m of text.matchAll(p)) if (m[0].length > 0) out.push({ category: "keyword", start: m.index, end: m.index + m[0].length });
  }
  for (const marker of rules.markers) {
    const at = text.indexOf(marker);
    if (at >= 0) out.push({ category: "marker", start: at, end: at + marker.length });
  }
  return out;
}

/** All detections in `text`, sorted, overlaps resolved in favour of the earlier (then longer) one. */
export function detect(text: string, rules: CustomRules): Detection[] {
  const found = detectStructured(text);
  const custom = rules.keywords.length > 0 || rules.patterns.length > 0 || rules.markers.length > 0;
  if (!custom) return found;
  detectCustom(text, rules, found);
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: Detection[] = [];
  let end = -1;
  for (const d of found) {
    if (d.start < end) continue;
    kept.push(d);
    end = d.end;
  }
  return kept;
}
