/**
 * The summarizer that needs no model: keeps the sentences of aged-out messages that carry what a
 * later turn may need — names, numbers, dates, decisions, open questions — and drops the rest
 * and every repeat. Sentences stay verbatim and in order, each line prefixed by its speaker, so
 * a planted fact survives exactly as it was written. English and Chinese.
 *
 * `extend` adds the sentences of newly aged-out messages to an existing summary without
 * rebuilding it: each exchange that ages out is summarized once.
 */
import type { Message } from "../../common/canonical/types.ts";
import { messageText } from "./tokens.ts";

/** Sentence ends (Latin and CJK) and line breaks. */
const SENTENCE = /[^.!?。！？；;\n]+(?:[.!?。！？；;]+|$)/gu;
const DIGIT = /\p{Nd}/u;
const DATE =
  /\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\b(?:today|tomorrow|yesterday|tonight|next week|next month)\b|[月日号周]|星期|明天|后天|昨天|下周|下个月/iu;
const DECISION =
  /\b(?:decid(?:e|ed|ing)|agree[ds]?|confirm(?:s|ed)?|chose|choose|selected?|go(?:ing)? with|settled on|approved?|deadline|budget|must|will|won't|need to|plan(?:ned)? to|prefer|call(?:ed)?|named?|password|address|account|order)\b|决定|同意|确定|确认|选择|选定|采用|就用|批准|预算|截止|必须|需要|计划|叫做|名叫|名字|地址|账号|订单/iu;
const QUESTION = /[?？]\s*$/u;
/** A capitalized word that does not start the sentence: a name, a place, a product (not "I"). */
const PROPER = /(?<=[\p{L}\p{Nd},;:'")] )(?!I\b)\p{Lu}[\p{L}\p{Nd}'-]+/u;
const QUOTED = /["“”«»《》「」『』][^"“”«»《》「」『』]{1,80}["“”«»《》「」『』]/u;
const CJK_NAME = /(?:叫|是|找|联系|由|给|和)[\p{Script=Han}]{2,3}(?:先生|女士|经理|老师|总)?/u;

export interface SummaryLine {
  speaker: string;
  sentence: string;
}

/** Whether a sentence carries something a later turn may need. */
export function carriesFact(sentence: string): boolean {
  return (
    DIGIT.test(sentence) ||
    DATE.test(sentence) ||
    DECISION.test(sentence) ||
    QUESTION.test(sentence) ||
    PROPER.test(sentence) ||
    QUOTED.test(sentence) ||
    CJK_NAME.test(sentence)
  );
}

const speakerOf = (m: Message): string => (m.role === "assistant" ? "Assistant" : m.role === "tool" ? "Tool result" : "User");

/** A sentence as compared for repeats: case, spacing and trailing punctuation do not matter. */
const normal = (s: string): string =>
  s
    .toLowerCase()
    .replace(/[\s.!?。！？；;,，]+/gu, " ")
    .trim();

/**
 * The sentences a summary already holds, by summary text, for the summaries extended lately: the
 * next extension of a conversation's summary starts from its set instead of re-reading it.
 */
const seenBySummary = new Map<string, Set<string>>();
const SEEN_KEPT = 10_000;

function seenIn(previous: string): Set<string> {
  const known = seenBySummary.get(previous);
  if (known) {
    seenBySummary.delete(previous);
    return known;
  }
  const seen = new Set<string>();
  for (const line of previous.split("\n")) for (const s of line.replace(/^[^:]+: /, "").match(SENTENCE) ?? []) seen.add(normal(s));
  return seen;
}

/** The summary text of `messages`; `previous` (an earlier summary) goes first and its sentences are not repeated. */
export function extendSummary(previous: string | undefined, messages: readonly Message[]): string {
  const seen = previous ? seenIn(previous) : new Set<string>();
  const lines: string[] = [];
  for (const m of messages) {
    const kept: string[] = [];
    for (const raw of messageText(m).match(SENTENCE) ?? []) {
      const sentence = raw.trim();
      if (sentence === "" || !carriesFact(sentence)) continue;
      const key = normal(sentence);
      if (key === "" || seen.has(key)) continue;
      seen.add(key);
      kept.push(sentence);
    }
    if (kept.length > 0) lines.push(`${speakerOf(m)}: ${kept.join(" ")}`);
  }
  // The previous text is kept as it is (not split and joined again): a summary grows by its new lines.
  let head = previous ?? "";
  while (head.endsWith("\n")) head = head.slice(0, -1);
  const added = lines.join("\n");
  const text = head === "" ? added : added === "" ? head : `${head}\n${added}`;
  // The set now belongs to the new text (the previous one's entry was taken out above).
  seenBySummary.set(text, seen);
  if (seenBySummary.size > SEEN_KEPT) seenBySummary.delete(seenBySummary.keys().next().value as string);
  return text;
}
