/**
 * The data boundary's detectors: where a text carries values that must not leave as they are.
 * A cheap scan finds the positions where a structured value may begin (runs of digits, `+`, `(`,
 * `:`, long runs of key characters, known key prefixes, `@`); the candidate expressions run
 * sticky there only, and each candidate is then checked by its category's validator (Luhn for
 * cards, the ISO 7064 check digit of a Chinese resident ID, mod-97 for an IBAN, `net.isIP` for
 * addresses, character entropy for unprefixed tokens), so order numbers, dates, version strings
 * and hashes fall out. Values known only by what comes before them (a password after its name, a
 * URL's password) are `context-values.ts`'s. Per-tenant keywords and patterns and confidential
 * markers are a second, plain scan; names and street addresses (`names.ts`) a third, when a policy
 * asks for them.
 */
import { isIPv4, isIPv6 } from "node:net";
import { valuesInContext, withValuesInContext } from "./context-values.ts";
import { detectPersonal } from "./names.ts";
import { bankCardValid, ibanValid, looksRandom, residentIdValid, ssnValid } from "./validators.ts";

export { bankCardValid, ibanValid, looksRandom, residentIdValid, ssnValid };

/** What a detected value is. */
export type Category = "email" | "phone" | "national_id" | "bank_card" | "iban" | "ip" | "secret" | "keyword" | "marker" | "name" | "address";

export const CATEGORIES: readonly Category[] = ["email", "phone", "national_id", "bank_card", "iban", "ip", "secret", "keyword", "marker", "name", "address"];

/** The groups a policy names; a category's own key overrides its group's. */
export const GROUPS = {
  pii: ["email", "phone", "national_id", "bank_card", "iban", "ip"],
  secrets: ["secret"],
  confidential: ["keyword", "marker"],
  /** Person names and street addresses (`names.ts`): rules and dictionaries, less certain. */
  personal: ["name", "address"],
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
  /** Look for names and street addresses too (a policy that does not allow them). */
  personal?: boolean;
}

// The expressions, in the order they win at one position; each runs sticky, only where the scan
// below says a match may begin.
export type Kind = Category | "cn_id" | "ssn" | "ipv6" | "token";
const SOURCES: [Kind, string][] = [
  // Known key and token shapes (OpenAI, Anthropic, AWS, GitHub, Slack, Google, GitLab, Stripe, npm, Hugging Face, PyPI,
  // Groq, xAI, Shopify, Slack and Discord webhook URLs, JWT, PEM: a private key of at most 16 KB, so that many headers
  // without an end cost a bounded scan each).
  [
    "secret",
    String.raw`(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|glpat-[A-Za-z0-9_-]{20}|[rs]k_(?:live|test)_[A-Za-z0-9]{16,}|npm_[A-Za-z0-9]{36}|hf_[A-Za-z0-9]{30,}|pypi-[A-Za-z0-9_-]{50,}|gsk_[A-Za-z0-9]{40,}|xai-[A-Za-z0-9]{40,}|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}|(?:hooks\.slack\.com/services|discord(?:app)?\.com/api/webhooks)/[A-Za-z0-9/_-]{20,}|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}|-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----[\s\S]{0,16384}?-----END [A-Z ]{0,40}PRIVATE KEY-----)`,
  ],
  ["iban", String.raw`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b`],
  ["cn_id", String.raw`(?<![\dA-Za-z])(?:\d{17}|\d{6} \d{8} \d{3})[\dXx](?![\dA-Za-z])`],
  ["ssn", String.raw`(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])`],
  // American Express's 4-6-5 grouping, then every other card's groups of four.
  ["bank_card", String.raw`(?<![\d-])(?:3[47]\d{2}[ -]?\d{6}[ -]?\d{5}|(?:\d{4}[ -]?){3}\d{1,7})(?![\d-])`],
  // Chinese mobile (+86 optional), then international numbers written with `+` (or `(+44)`), then North American
  // (xxx) xxx-xxxx (1- before it optional), international numbers written with 00,
  // then national numbers with their trunk 0: a Chinese landline (area code 010, 02x or 0xxx; a local number of 7-8
  // digits not from 0, not a date: 010-12345678, 0755-1234567) and the European
  // grouping of an area code and two groups (020 7946 0958, 0161 496 0000).
  [
    "phone",
    String.raw`(?:(?<![\d+])(?:(?:\+|00)86[ -]?)?1[3-9]\d[ -]?\d{4}[ -]?\d{4}(?!\d)|(?<![\w+])\+\d{1,3}\)?[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){2,4}(?!\d)|(?<![\w-])(?:1[ .-])?\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}(?![\d-])|(?<![\w+.-])00[1-9]\d{0,2} \d{1,4}(?: ?\d{2,4}){1,4}(?![\d.-])|(?<![\w-])0(?:10|2\d|[3-9]\d{2})-(?!20\d{2}(?:0[1-9]|1[0-2])[0-3]\d(?!\d))[1-9]\d{6,7}(?![\d-])|(?<![\w.-])0\d{2,4} \d{3,4} \d{3,4}(?![\d-]|\.\d))`,
  ],
  ["ip", String.raw`(?<![\w.])(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}(?![\w.]|\.\d)`],
  ["ipv6", String.raw`(?<![\w:.])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?![\w:])`],
  // Unprefixed tokens: long runs of key characters, kept only when they look random (below).
  ["token", String.raw`(?<![\w-])[A-Za-z0-9_-]{24,}(?![\w-])`],
];
/** The expressions in their order (kind, source). */
export const EXPRESSIONS: readonly (readonly [Kind, string])[] = SOURCES;
const STICKY = SOURCES.map(([, s]) => new RegExp(s, "y"));
const KINDS = SOURCES.map(([k]) => k);
const [SECRET, IBAN, CN_ID, SSN, CARD, PHONE, IP, IPV6, TOKEN] = [0, 1, 2, 3, 4, 5, 6, 7, 8];

// Character classes of ASCII (anything else is none of them).
const KEY = 1; // [A-Za-z0-9_-]
const DIGIT = 2;
const HEX = 4;
const UPPER = 8;
const CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  CLASS[c] = (/[A-Za-z0-9_-]/.test(ch) ? KEY : 0) | (/\d/.test(ch) ? DIGIT : 0) | (/[0-9A-Fa-f]/.test(ch) ? HEX : 0) | (/[A-Z]/.test(ch) ? UPPER : 0);
}
const cls = (text: string, i: number): number => {
  const c = text.charCodeAt(i);
  return c < 128 ? CLASS[c]! : 0; // NaN (outside the text) is not < 128
};

// Where a candidate may begin, as flags: which expressions to try there.
const AT_SECRET = 1;
const AT_NUMBER = 2; // iban, cn_id, ssn, bank_card, phone, ip (each guarded by its own first characters)
const AT_IPV6 = 4;
const AT_TOKEN = 8;
// A run of digits begins (or a `+`/`(` before one), or a `:` another `:` follows within four hex digits.
const NUMBER_AT = /(?<!\d)\d|[+(](?=\d)|:(?=[0-9A-Fa-f]{0,4}:)/g;
// The literal beginnings of the known key shapes. Most lie in a run of 20 or more key characters and
// are looked for only there; the others (SHORT_SECRETS: Slack tokens, webhook URLs, JWTs, PEM
// headers) are found by their literal.
const SECRET_AT = /sk-|AKIA|gh[pousr]_|github_pat_|xox[abprs]-|AIza|glpat-|[rs]k_(?:live|test)_|npm_|hf_|pypi-|gsk_|xai-|shp(?:at|ss|ca|pa)_|eyJ|-----BEGIN /g;
const SHORT_SECRETS = /xox[abprs]-|hooks\.slack\.com\/services\/|discord(?:app)?\.com\/api\/webhooks\/|eyJ|-----BEGIN /g;
const KEY_RUN_MIN = 20;
const TOKEN_MIN = 24;

/**
 * Positions where one of the expressions may match, each tagged with the ones to try (encoded
 * `position * 16 + flags`, sorted). Every match of an expression begins at one of these: the
 * number expressions at the start of a run of digits (or two capitals before it for an IBAN, a
 * `+` or `(` for a phone), an IPv6 address at the hex run before a `:`, a token at the start of a
 * run of 24 or more key characters, a known key at its literal prefix. Regular expressions scan
 * for the single characters (faster here than a loop over the text's characters); runs of key
 * characters are found by looking at every 20th character only.
 */
function candidates(text: string): number[] {
  // Three lists, each in order (the first nearly: an IBAN's or IPv6 address's start is a few characters back), merged.
  const out: number[] = [];
  const runs: number[] = [];
  const short: number[] = [];
  NUMBER_AT.lastIndex = 0;
  while (NUMBER_AT.test(text)) {
    const i = NUMBER_AT.lastIndex - 1;
    const c = text.charCodeAt(i);
    if (c !== 58 /* : */) {
      if (c !== 43 && c !== 40 && i >= 2 && cls(text, i - 1) & UPPER && cls(text, i - 2) & UPPER) insert(out, (i - 2) * 16 + AT_NUMBER);
      insert(out, i * 16 + AT_NUMBER);
      continue;
    }
    let b = i;
    while (b > i - 4 && cls(text, b - 1) & HEX) b--;
    insert(out, b * 16 + AT_IPV6);
  }
  // Any run of KEY_RUN_MIN key characters covers one of the probed positions.
  const n = text.length;
  for (let j = KEY_RUN_MIN - 1; j < n; j += KEY_RUN_MIN) {
    if (!(cls(text, j) & KEY)) continue;
    let start = j;
    while (cls(text, start - 1) & KEY) start--;
    let end = j + 1;
    while (cls(text, end) & KEY) end++;
    if (end - start >= TOKEN_MIN) runs.push(start * 16 + AT_TOKEN);
    if (end - start >= KEY_RUN_MIN) {
      // Within the run only (from its start, the expression would search the rest of the text).
      const run = text.slice(start, end);
      SECRET_AT.lastIndex = 0;
      for (let m = SECRET_AT.exec(run); m !== null; m = SECRET_AT.exec(run)) runs.push((start + m.index) * 16 + AT_SECRET);
    }
    j = end;
  }
  SHORT_SECRETS.lastIndex = 0;
  // A PEM header with no end after it is no key (and each would cost a scan of up to 16 KB).
  const pemEnd = text.lastIndexOf("-----END ");
  for (let m = SHORT_SECRETS.exec(text); m !== null; m = SHORT_SECRETS.exec(text))
    if (m[0] !== "-----BEGIN " || m.index < pemEnd) short.push(m.index * 16 + AT_SECRET);
  return merged(merged(out, runs), short);
}

/** Two sorted lists as one (linear; a comparator sort would cost more than the scan). */
function merged(a: number[], b: number[]): number[] {
  if (b.length === 0) return a;
  if (a.length === 0) return b;
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(a[i]! <= b[j]! ? a[i++]! : b[j++]!);
  while (i < a.length) out.push(a[i++]!);
  while (j < b.length) out.push(b[j++]!);
  return out;
}

/** `v` put in its place in the sorted `out`, which it follows nearly in order (a few places back at most). */
function insert(out: number[], v: number): void {
  let j = out.length;
  out.push(v);
  while (j > 0 && out[j - 1]! > v) {
    out[j] = out[j - 1]!;
    j--;
  }
  out[j] = v;
}

/** The first expression matching at `p` among those `flags` allow, in their order; its index, its match in `STICKY[index]`. */
function matchAt(text: string, p: number, flags: number): [number, string] | undefined {
  const first = cls(text, p);
  let digits = 0; // the run of digits at p
  if (first & DIGIT) while (cls(text, p + digits) & DIGIT) digits++;
  for (let e = 0; e < STICKY.length; e++) {
    if (!allowed(text, p, e, flags, first, digits)) continue;
    const re = STICKY[e]!;
    re.lastIndex = p;
    const m = re.exec(text);
    if (m) return [e, m[0]];
  }
  return undefined;
}

/**
 * A cheap necessary condition for expression `e` to match at `p`, from the class of `text[p]`
 * (`first`) and the run of `digits` there: each expression's own first characters.
 */
function allowed(text: string, p: number, e: number, flags: number, first: number, digits: number): boolean {
  if (e === SECRET) return (flags & AT_SECRET) !== 0;
  if (e === IPV6) return (flags & AT_IPV6) !== 0;
  if (e === TOKEN) return (flags & AT_TOKEN) !== 0;
  if (!(flags & AT_NUMBER)) return false;
  const after = text.charCodeAt(p + digits);
  switch (e) {
    case IBAN:
      return (first & UPPER) !== 0 && (cls(text, p + 2) & DIGIT) !== 0;
    case CN_ID:
      return digits >= 17 || (digits === 6 && after === 32);
    case SSN:
      return digits === 3 && after === 45; /* - */
    case CARD:
      // (\d{4}[ -]?){3}\d{1,7}: four digits and a separator, eight, or twelve and more.
      return digits === 4 || digits === 8 || digits >= 12;
    case PHONE:
      // +…, (xxx), 1[3-9]x…, 00 86…, or xxx followed by a separator.
      if (digits === 0) return text.charCodeAt(p) === 43 || text.charCodeAt(p) === 40;
      if (digits === 1) return text.charCodeAt(p) === 49 && (after === 32 || after === 46 || after === 45); /* 1 and a separator */
      return digits >= 4 || (digits === 3 && (after === 32 || after === 46 || after === 45 || after === 41));
    case IP:
      return digits >= 1 && digits <= 3 && after === 46; /* . */
    default:
      return false;
  }
}

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

/**
 * The expressions' matches in `text`, in order: the same as one combined expression of all of
 * them run over the whole text (`EXPRESSIONS`, alternatives in their order), at a fraction of
 * its cost — tried only at the positions `candidates` finds, in their order at each, and a match
 * skipped over whether it is kept or not.
 */
function eachMatch(text: string, f: (kind: Kind, start: number, value: string) => void): void {
  let end = 0;
  const cands = candidates(text);
  for (let i = 0; i < cands.length; i++) {
    const p = Math.floor(cands[i]! / 16);
    let flags = cands[i]! % 16;
    while (i + 1 < cands.length && Math.floor(cands[i + 1]! / 16) === p) flags |= cands[++i]! % 16;
    if (p < end) continue;
    const m = matchAt(text, p, flags);
    if (!m) continue;
    end = p + m[1].length;
    f(KINDS[m[0]]!, p, m[1]);
  }
}

/** `eachMatch`'s matches as a list (for the test that holds it to the combined expression). */
export function expressionMatches(text: string): [Kind, number, string][] {
  const out: [Kind, number, string][] = [];
  eachMatch(text, (kind, start, value) => out.push([kind, start, value]));
  return out;
}

/** Structured values in `text`, in order, non-overlapping. Throws only on a bug (the caller fails closed). */
export function detectStructured(text: string, out: Detection[] = []): Detection[] {
  const mails = text.includes("@") ? (emails(text, out), out.length) : 0;
  eachMatch(text, (kind, start, value) => {
    // A dotted quad after "version"/"build"/"v" is a version string, not an address.
    if (kind === "ip" && VERSION_BEFORE.test(text.slice(Math.max(0, start - 10), start))) return;
    const category = validated(kind, value);
    if (category) out.push({ category, start, end: start + value.length });
  });
  if (mails > 0) mergeEmails(out, mails);
  const found = valuesInContext(text);
  return found.length === 0 ? out : withValuesInContext(out, found);
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

function validated(kind: Kind, v: string): Category | undefined {
  switch (kind) {
    case "cn_id":
      return residentIdValid(v.replace(/ /g, "")) ? "national_id" : undefined;
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
    case "name":
    case "address":
      return kind;
    default:
      return kind satisfies never;
  }
}

/** Default confidential markers: a document that says so about itself. */
export const DEFAULT_MARKERS = ["CONFIDENTIAL", "STRICTLY CONFIDENTIAL", "INTERNAL ONLY", "DO NOT DISTRIBUTE", "机密", "绝密", "内部资料", "内部文件", "秘密"];

// Compiled forms of keywords and marker lists, made once per keyword or list (both come from the config).
const keywordRes = new Map<string, RegExp>();
const markerRes = new WeakMap<readonly string[], RegExp>();
const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Keywords (case-insensitive), custom patterns (category `keyword`) and markers (`marker`, first of each) in `text`. */
export function detectCustom(text: string, rules: CustomRules, out: Detection[] = []): Detection[] {
  for (const k of rules.keywords) {
    let re = keywordRes.get(k);
    if (!re) keywordRes.set(k, (re = new RegExp(escaped(k), "gi")));
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) out.push({ category: "keyword", start: m.index, end: m.index + m[0].length });
  }
  for (const p of rules.patterns) {
    p.lastIndex = 0;
    for (const m of text.matchAll(p)) if (m[0].length > 0) out.push({ category: "keyword", start: m.index, end: m.index + m[0].length });
  }
  if (rules.markers.length === 0) return out;
  // One scan says whether any marker is there at all (the common case: none).
  let any = markerRes.get(rules.markers);
  if (!any) markerRes.set(rules.markers, (any = new RegExp(rules.markers.map(escaped).join("|"))));
  if (!any.test(text)) return out;
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
  if (!custom && !rules.personal) return found;
  const structured = found.length;
  if (custom) detectCustom(text, rules, found);
  if (rules.personal) detectPersonal(text, found);
  // Nothing more found (the common case): the structured values are already in order, apart.
  if (found.length === structured) return found;
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
