/**
 * Person names and street addresses, English and Chinese, by rules and dictionaries
 * (`names-dict.ts`) — far less certain than the structured detectors, so off unless a policy
 * names them (`personal`, `name`, `address`). Each rule starts from something rare and cheap to
 * find, then looks around it:
 *
 *   English names    a title (Mr, Ms, Dr, Prof…) and one or two capitalised words; a known given
 *                    name and a capitalised word that is not a place, brand or weekday; a known
 *                    given name alone inside a sentence (not its first word)
 *   Chinese names    a title after the name (先生, 女士, 经理, 老师…) or a cue before it (联系人,
 *                    收件人, 我叫…), the name a 百家姓 surname and one or two characters
 *   English address  a house number, one to four capitalised words and a street suffix (St,
 *                    Street, Ave, Road, Rd, Blvd, Lane…), then an optional unit, city, state, ZIP
 *   Chinese address  a known city or province (or after 地址：), then 省/市/区/县…, a road (路, 街, 大道,
 *                    巷, 弄) and a number with 号, then optional building, unit and room
 *
 * Measured precision and recall: bench/RESULTS.md (`npm run bench:boundary`).
 */
import type { Detection } from "./detect.ts";
import { CN_COMMON_WORDS, CN_WORDS_BEFORE } from "./names-zh-words.ts";
import { CN_COMPOUND_SURNAMES, CN_PLACES, CN_SURNAMES, GIVEN_NAMES, NOT_SURNAMES, SURNAMES } from "./names-dict.ts";

const WORD = String.raw`(?:O'|Mc|Mac)?[A-Z][a-z]+(?:-[A-Z][a-z]+)?`;
const TITLED = new RegExp(String.raw`\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof)\.?[ \t]+(${WORD})(?:[ \t]+(${WORD}))?`, "dg");
const CAPITALISED = new RegExp(String.raw`\b${WORD}\b`, "g");
// Capitalised words that do not begin a name (titles are the title rule's).
const FUNCTION_WORDS = /^(?:The|A|An|In|On|At|For|And|But|Of|To|By|With|From|As|Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Saint|Mount|Lake|Fort|Port|National|Dow)$/;
/** `text[i]` begins a sentence: nothing before it but spaces, or an end of sentence, a colon, a quote. */
function sentenceStart(text: string, i: number): boolean {
  let j = i - 1;
  while (j >= 0 && (text[j] === " " || text[j] === "\t")) j--;
  return j < 0 || '.!?:;\n"“(\u3002'.includes(text[j]!);
}
/** `text[i]` follows "the " (a product or a place: the Apple Watch, the Ford Motor). */
const afterThe = (text: string, i: number) => i >= 4 && text[i - 1] === " " && /^the$/i.test(text.slice(i - 4, i - 1)) && !/\w/.test(text[i - 5] ?? "");

const SUFFIX = String.raw`(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Parkway|Pkwy|Highway|Hwy|Circle|Square|Sq)`;
const EN_ADDRESS = new RegExp(
  String.raw`\b\d{1,5}[A-Z]?(?:-\d{1,5})?[ \t]+(?:[NSEW]\.?[ \t]+)?(?:[A-Z][a-z]+|\d{1,3}(?:st|nd|rd|th))(?:[ \t]+[A-Z][a-z]+){0,3}[ \t]+${SUFFIX}\b\.?` +
    String.raw`(?:,?[ \t]+(?:Apt|Suite|Ste|Unit|Floor|#)\.?[ \t]*[A-Za-z0-9-]+)?` +
    String.raw`(?:,[ \t]+[A-Z][a-z]+(?:[ \t]+[A-Z][a-z]+)?(?:,[ \t]+[A-Z]{2}(?:[ \t]+\d{5}(?:-\d{4})?)?)?)?`,
  "g",
);
const HAN = String.raw`[\u4e00-\u9fff]`;
// Each part's name excludes the characters that end a part, so the text splits into parts one way only (an
// ambiguous split backtracks exponentially: 北京市区区区…区 took 5 s at 40 characters).
const DIVISION = String.raw`(?:(?![省市区县镇乡路街巷弄号])${HAN}){1,6}(?:省|市|区|县|镇|乡)`;
const ROAD = String.raw`(?:(?![省市区县镇乡路街巷弄号])[\u4e00-\u9fff\d]){1,8}?(?:路|街|大道|大街|巷|弄)`;
const CN_ADDRESS = new RegExp(
  String.raw`(?:(?:${CN_PLACES.join("|")})(?:省|市|特别行政区)?|(?<=地址[:：]\s*))(?:${DIVISION}){0,3}` +
    String.raw`${ROAD}\d{1,5}(?:-\d{1,5})?号(?:\d{1,4}(?:栋|幢|号楼))?(?:\d{1,3}单元)?(?:\d{1,5}室)?`,
  "g",
);
// What every Chinese address has (a road and its number): tested first, the full expression is costly.
const CN_ROAD_NUMBER = /(?:路|街|大道|巷|弄)\d{1,5}(?:-\d{1,5})?号/;
// Any of the Chinese rules' starting points (one scan before three).
const CN_ANY = /先生|女士|小姐|经理|老师|总监|医生|律师|教授|同学|师傅|姓名|联系人|收件人|收货人|负责人|申请人|我叫|名叫|本人|(?:路|街|大道|巷|弄)\d/;
const CN_TITLE = /先生|女士|小姐|经理|老师|总监|医生|律师|教授|同学|师傅/g;
const CN_CUE = /(?:姓名[:：]|(?:联系人|收件人|收货人|负责人|申请人|本人)[:：]?|我叫|名叫)\s*/g;
// Words that end where a title begins and are not names (项目经理, 班主任…).
const CN_NOT_NAMES = new Set(
  "项目 部门 产品 销售 技术 财务 市场 大堂 客户 区域 总经 副总 班主 数学 语文 英语 物理 化学 主治 实习 值班 我们 你们 他们 各位 这位 那位".split(" "),
);
// A character that ends a name when it follows one (a name takes at most two after the surname).
const CN_AFTER = new Set("的是在说和与将会要已也都就先女小经老电手负请于把被给对从让".split(""));
// Characters that often come just before a name (a name before a title needs one, or no Han character, before it).
const CN_BEFORE = new Set("说和与跟给找请问是位叫让向对被把由见约从到系送谢诉知转抄者及有".split(""));
const isHan = (c: string | undefined) => c !== undefined && c >= "\u4e00" && c <= "\u9fff";
const allHan = (text: string, from: number, to: number) => {
  for (let k = from; k < to; k++) if (!isHan(text[k])) return false;
  return true;
};
const surnameAt = (text: string, i: number) => CN_SURNAMES.includes(text[i] ?? "\u0000");

/** Names and addresses in `text`, appended to `out` (unsorted; `detect` sorts and resolves overlaps). */
export function detectPersonal(text: string, out: Detection[]): void {
  englishNames(text, out);
  if (/\d/.test(text)) match(EN_ADDRESS, text, "address", out);
  if (!CN_ANY.test(text)) return;
  chineseNames(text, out);
  if (CN_ROAD_NUMBER.test(text)) match(CN_ADDRESS, text, "address", out);
}

function match(re: RegExp, text: string, category: "address", out: Detection[]): void {
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) out.push({ category, start: m.index, end: m.index + m[0].length });
}

function englishNames(text: string, out: Detection[]): void {
  TITLED.lastIndex = 0;
  for (let m = TITLED.exec(text); m !== null; m = TITLED.exec(text)) {
    if (NOT_SURNAMES.has(m[1]!)) continue; // Miss America, Dr Pepper's Park…
    const [start, firstEnd] = m.indices![1]!;
    const second = m[2] !== undefined && !NOT_SURNAMES.has(m[2]) ? m.indices![2] : undefined;
    out.push({ category: "name", start, end: second ? second[1] : firstEnd });
  }
  CAPITALISED.lastIndex = 0;
  let prev: RegExpExecArray | null = null;
  for (let m = CAPITALISED.exec(text); m !== null; prev = m, m = CAPITALISED.exec(text)) {
    if (!GIVEN_NAMES.has(m[0])) {
      // A given name the dictionary does not know, before a known surname, inside a sentence (…with Ingrid Miller).
      const after = m.index + m[0].length;
      if (text[after] !== " " || !/[A-Z]/.test(text[after + 1] ?? "")) continue;
      if (NOT_SURNAMES.has(m[0]) || sentenceStart(text, m.index) || afterThe(text, m.index)) continue;
      const next = CAPITALISED.exec(text);
      if (!next) break;
      const known = SURNAMES.has(next[0]) && !GIVEN_NAMES.has(next[0]) && !NOT_SURNAMES.has(next[0]);
      if (next.index === m.index + m[0].length + 1 && text[next.index - 1] === " " && known && !FUNCTION_WORDS.test(m[0]))
        out.push({ category: "name", start: m.index, end: next.index + next[0].length });
      else CAPITALISED.lastIndex = next.index;
      continue;
    }
    const start = m.index;
    let end = start + m[0].length;
    // The next capitalised word, one space on: a surname unless it is a place, brand or weekday.
    const next = CAPITALISED.exec(text);
    if (next && next.index === end + 1 && text[end] === " " && !NOT_SURNAMES.has(next[0]) && (SURNAMES.has(next[0]) || !GIVEN_NAMES.has(next[0])))
      end = next.index + next[0].length;
    else if (next) CAPITALISED.lastIndex = next.index;
    else CAPITALISED.lastIndex = text.length; // exec found none and went back to 0
    // A given name alone counts inside a sentence only (a first word may be a verb: "Mark it done").
    if (end === start + m[0].length && sentenceStart(text, start)) continue;
    if (prev && prev.index + prev[0].length + 1 === start && /^(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof)$/.test(prev[0])) continue;
    out.push({ category: "name", start, end });
  }
}

function chineseNames(text: string, out: Detection[]): void {
  CN_TITLE.lastIndex = 0;
  for (let m = CN_TITLE.exec(text); m !== null; m = CN_TITLE.exec(text)) {
    const i = m.index;
    const start = nameBefore(text, i);
    if (start >= 0) out.push({ category: "name", start, end: i });
  }
  CN_CUE.lastIndex = 0;
  for (let m = CN_CUE.exec(text); m !== null; m = CN_CUE.exec(text)) {
    const s = m.index + m[0].length;
    const compound = CN_COMPOUND_SURNAMES.some((c) => text.startsWith(c, s));
    if (!compound && !surnameAt(text, s)) continue;
    let end = s + (compound ? 2 : 1);
    for (let k = 0; k < 2 && isHan(text[end]) && !CN_AFTER.has(text[end]!); k++) end++;
    if (end > s + (compound ? 2 : 1)) out.push({ category: "name", start: s, end });
  }
}

/**
 * Whether the candidate name text[start, end) is an ordinary word: its first two characters are a
 * word that is not a name (毕业老师, 国产女士) — unless a third character follows that is not a
 * function character (王国强先生 is a name, 毕业给老师 is not).
 */
function commonWordAt(text: string, start: number, end: number): boolean {
  const two = text.slice(start, start + 2);
  if (CN_NOT_NAMES.has(two)) return true;
  if (!CN_COMMON_WORDS.has(two)) return false;
  return end - start === 2 || CN_BEFORE.has(text[start + 2]!) || CN_AFTER.has(text[start + 2]!);
}

/**
 * Where a name ending at `i` (a title's start) begins, or -1: a compound surname and one or two
 * characters, else the longest of a surname and two characters, a surname and one, a surname
 * alone (王经理) that the character before allows — not a Han character, one that often comes
 * before a name (请张伟先生, 给王小明老师, 和李伟先生; not 中国惊奇先生, 作文语文老师), or the end
 * of a frequent verb or noun (帮我总结罗勇丽医生, 感谢王伟先生); all of it Han characters, and not an
 * ordinary word (毕业老师, 国产女士).
 */
function nameBefore(text: string, i: number): number {
  if (i >= 3 && CN_COMPOUND_SURNAMES.includes(text.slice(i - 3, i - 1))) return i - 3;
  if (i >= 4 && CN_COMPOUND_SURNAMES.includes(text.slice(i - 4, i - 2))) return i - 4;
  for (let start = i - 3; start < i; start++) {
    if (start < 0 || !surnameAt(text, start) || !allHan(text, start + 1, i)) continue;
    if (commonWordAt(text, start, i)) continue;
    if (!isHan(text[start - 1]) || CN_BEFORE.has(text[start - 1]!)) return start;
    if (start >= 2 && CN_WORDS_BEFORE.has(text.slice(start - 2, start))) return start;
  }
  return -1;
}
