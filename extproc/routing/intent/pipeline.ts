/**
 * The intent pipeline over any model: a valid client hint wins, then the high-precision pattern
 * layer (`keywords.ts`), then the model; a model guess below `MODEL_THRESHOLD` becomes
 * `unknown`. `classify.ts` wires it to the committed model; training evaluates it on a fresh one.
 */
import type { Message } from "../../../common/canonical/types.ts";
import { type Intent, isIntent } from "./intents.ts";
import { type KeywordHit, matchKeywords } from "./keywords.ts";
import type { Prediction } from "./linear.ts";
export type IntentSource = "hint" | "keywords" | "model";

export interface IntentResult {
  intent: Intent;
  /** 1 for a hint; the rule's score for a keyword hit; the model's top probability otherwise. */
  confidence: number;
  source: IntentSource;
}

/** Below this top probability the model's guess is reported as `unknown`. */
export const MODEL_THRESHOLD = 0.45;

/** Pattern hits in the system prompt count only for these tasks, which a system prompt sets. */
const SYSTEM_TASKS: ReadonlySet<Intent> = new Set<Intent>(["summarize", "translate", "extract_entity", "intent_classify", "rewrite"]);
const SYSTEM_DISCOUNT = 0.9;
const SYSTEM_CHARS = 500;
const SYSTEM_CACHE = 256;
const HAS_WORD = /[\p{L}]/u;

function textOf(content: Message["content"]): string {
  if (content === null) return "";
  if (typeof content === "string") return content;
  let out = "";
  for (const part of content) {
    if (part.type === "text") out = out === "" ? part.text : `${out}\n${part.text}`;
  }
  return out;
}

function lastUserText(messages: readonly Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === "user") return textOf(m.content);
  }
  return "";
}

function systemText(messages: readonly Message[]): string {
  let out = "";
  for (const m of messages) {
    if (m.role !== "system" && m.role !== "developer") continue;
    out = out === "" ? textOf(m.content) : `${out}\n${textOf(m.content)}`;
    if (out.length >= SYSTEM_CHARS) return out.slice(0, SYSTEM_CHARS);
  }
  return out;
}

export type IntentClassifier = (messages: readonly Message[], hint?: string) => IntentResult;

/**
 * A classifier of the last user message (the system prompt counts lightly: its pattern hits for
 * summarize/translate/extract/classify/rewrite apply when the user message has none). `hint`
 * is a client-supplied intent; the caller decides whether hints are allowed, and an invalid one
 * is ignored.
 */
export function createClassifier(predict: (text: string) => Prediction, threshold = MODEL_THRESHOLD): IntentClassifier {
  // Applications resend the same system prompt, so its pattern result is remembered.
  const systemHits = new Map<string, KeywordHit | null>();
  const systemHit = (system: string): KeywordHit | null => {
    let hit = systemHits.get(system);
    if (hit === undefined) {
      const found = matchKeywords(system);
      hit = found && SYSTEM_TASKS.has(found.intent) ? found : null;
      if (systemHits.size >= SYSTEM_CACHE) systemHits.clear();
      systemHits.set(system, hit);
    }
    return hit;
  };
  return (messages, hint) => {
    if (hint !== undefined) {
      const h = hint.trim().toLowerCase();
      if (isIntent(h)) return { intent: h, confidence: 1, source: "hint" };
    }
    const text = lastUserText(messages).trim();
    const kw = text === "" ? undefined : matchKeywords(text);
    if (kw) return { intent: kw.intent, confidence: kw.score, source: "keywords" };
    const system = systemText(messages);
    if (system !== "") {
      const sys = systemHit(system);
      if (sys) return { intent: sys.intent, confidence: sys.score * SYSTEM_DISCOUNT, source: "keywords" };
    }
    if (!HAS_WORD.test(text)) return { intent: "unknown", confidence: 0, source: "model" };
    const p = predict(text);
    if (p.confidence < threshold) return { intent: "unknown", confidence: p.confidence, source: "model" };
    return { intent: p.intent, confidence: p.confidence, source: "model" };
  };
}
