/**
 * The question fingerprint: what kind of answer a question asks for. Two questions on the same
 * topic ("what's the weather today?" / "is today good for a trip?") sit close in embedding space
 * but want different answers; their fingerprints differ, so one's answer is not reused for the
 * other. A fingerprint is:
 *
 * - the question type: `open` (what / which / how, 什么 / 怎么 / 如何 / 哪个, and statements or
 *   instructions), `yesno` (is / can / does… at a sentence start, 吗 / 是否 / 能不能 / X不X), `why`,
 *   `when`, `where`, `who`, `quantity` (how many / much / long / often, 多少 / 几 / 多久);
 * - negation (not / never / no / without, 不 / 没 / 别 / 无 / 未, A-not-A questions aside);
 * - comparison (than / vs / versus / compare / difference / better / worse, 比 / 区别 / 差别 / 相比 / 还是).
 *
 * All three must agree. The first question cue in the text decides the type.
 */
import { normaliseQuestion } from "./hashed-embedder.ts";

export type QuestionType = "open" | "yesno" | "why" | "when" | "where" | "who" | "quantity";

export interface Fingerprint {
  type: QuestionType;
  negated: boolean;
  comparison: boolean;
}

export type FingerprintVerdict = { ok: true } | { ok: false; reason: "type" | "negation" | "comparison" };

const AUX = new Set([
  "is",
  "are",
  "am",
  "was",
  "were",
  "do",
  "does",
  "did",
  "can",
  "could",
  "should",
  "would",
  "will",
  "shall",
  "may",
  "might",
  "must",
  "has",
  "have",
  "had",
]);
const WH: Record<string, QuestionType> = {
  what: "open",
  which: "open",
  how: "open",
  why: "why",
  when: "when",
  where: "where",
  who: "who",
  whom: "who",
  whose: "who",
};
const QUANTITY_AFTER_HOW = new Set(["many", "much", "long", "often", "old", "far", "big", "tall", "large", "fast"]);

/** Chinese cues, longest first where one contains another (什么时候 before 什么). */
const ZH_CUES: [RegExp, QuestionType][] = [
  [/为什么|为何|干嘛|怎么会|凭什么/, "why"],
  [/什么时候|何时|几时|几点|哪天|哪年|哪一年/, "when"],
  [/哪里|哪儿|在哪|何处|什么地方|去哪/, "where"],
  [/谁|哪位/, "who"],
  [/多少|几[个岁次年天月号种本条只位]|多久|多长|多大|多高|多远|多重/, "quantity"],
  [/怎么|怎样|如何|咋|什么|啥|哪个|哪些|哪/, "open"],
  [/吗|是否|能否|可否|([\u4e00-\u9fff])[不没]\1|有没有/, "yesno"],
];

const NEGATION_EN = /\b(not|no|never|without|none|nobody|nothing|neither|nor|cannot)\b/;
/** 不 / 没 / 别 / 无 / 未 / 非, except in A-not-A questions (是不是, 有没有) and words where they do not negate. */
const NEGATION_ZH = /[不没别无未非莫]/g;
const NOT_NEGATION_ZH =
  /不同|不错|不过|不管|不少|不断|不仅|不久|不如|不得不|不一样|无论|无线|无法|非常|并非|没关系|别人|别的|区别|差别|特别|分别|类别|级别|识别|性别|告别|无聊|莫名/g;
const COMPARISON_EN = /\b(than|vs|versus|compare|compared|comparison|difference|differences|different|better|worse|or)\b/;
const COMPARISON_ZH = /比(?![如赛例特分较])|区别|差别|不同|相比|对比|还是|哪个好|哪个更/;

export function fingerprint(text: string): Fingerprint {
  const lower = normaliseQuestion(text);
  const type = questionType(lower);
  const zh = lower.replace(NOT_NEGATION_ZH, "").replace(/([\u4e00-\u9fff])[不没]\1/g, "");
  const negated = NEGATION_EN.test(lower) || NEGATION_ZH.test(zh);
  NEGATION_ZH.lastIndex = 0;
  return { type, negated, comparison: COMPARISON_EN.test(lower) || COMPARISON_ZH.test(lower) };
}

function questionType(lower: string): QuestionType {
  const english = englishType(lower);
  const chinese = chineseType(lower);
  if (english === undefined) return chinese?.type ?? "open";
  if (chinese === undefined) return english.type;
  return english.at <= chinese.at ? english.type : chinese.type;
}

function englishType(lower: string): { type: QuestionType; at: number } | undefined {
  const words = lower.matchAll(/[a-z]+|[.?!。？！\n]/g);
  let sentenceStart = true;
  let previousHow: number | undefined;
  for (const m of words) {
    const w = m[0];
    if (previousHow !== undefined) return { type: QUANTITY_AFTER_HOW.has(w) ? "quantity" : w === "come" ? "why" : "open", at: previousHow };
    if (/^[.?!。？！\n]$/.test(w)) {
      sentenceStart = true;
      continue;
    }
    if (w === "how") {
      previousHow = m.index;
      continue;
    }
    const wh = WH[w];
    if (wh !== undefined) return { type: wh, at: m.index };
    if (sentenceStart && AUX.has(w)) return { type: "yesno", at: m.index };
    sentenceStart = false;
  }
  return previousHow === undefined ? undefined : { type: "open", at: previousHow };
}

function chineseType(lower: string): { type: QuestionType; at: number } | undefined {
  let best: { type: QuestionType; at: number } | undefined;
  for (const [re, type] of ZH_CUES) {
    const m = re.exec(lower);
    // Earlier cues win; at one position the more specific (listed first) wins.
    if (m && (best === undefined || m.index < best.at)) best = { type, at: m.index };
  }
  return best;
}

/** Whether two fingerprints ask for the same kind of answer. */
export function fingerprintsAgree(a: Fingerprint, b: Fingerprint): FingerprintVerdict {
  if (a.type !== b.type) return { ok: false, reason: "type" };
  if (a.negated !== b.negated) return { ok: false, reason: "negation" };
  if (a.comparison !== b.comparison) return { ok: false, reason: "comparison" };
  return { ok: true };
}
