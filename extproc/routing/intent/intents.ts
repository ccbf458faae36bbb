/** The task labels Gearbox's router knows; `unknown` means "no confident guess". */
export const INTENTS = [
  "summarize",
  "extract_entity",
  "intent_classify",
  "translate",
  "chitchat",
  "qa",
  "rewrite",
  "code_gen",
  "math",
  "multi_hop_reasoning",
  "creative_writing",
  "unknown",
] as const;

export type Intent = (typeof INTENTS)[number];

const INTENT_SET: ReadonlySet<string> = new Set(INTENTS);

export function isIntent(value: string): value is Intent {
  return INTENT_SET.has(value);
}
