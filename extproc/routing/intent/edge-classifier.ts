/**
 * The optional third intent layer: ask the edge model itself. When the pattern layer and the
 * trained model leave a request `unknown` (or under `intent_min_confidence`) and
 * `route.edge_intent.enable` is on, Gearbox sends the edge agent a short labelling prompt and
 * reads the first intent label in its answer; the agent's `x-gearbox-confidence` is the label's
 * confidence. It costs one short edge generation, bounded by `timeout_ms`; a timeout, an error,
 * an answer without a label or a confidence under `min_confidence` leave the intent as it was.
 *
 * This file holds the decision's side (the prompt, reading the label); the HTTP call to the agent
 * is `classifyOnEdge` in `extproc/edge/intent-call.ts`.
 */
import type { Message } from "../../../common/canonical/types.ts";
import { INTENTS, type Intent } from "./intents.ts";

export type EdgeIntentResult =
  { kind: "label"; intent: Intent; confidence: number } | { kind: "no_label"; answer: string } | { kind: "failed"; reason: string };

/** The last user message is what gets labelled; long ones are cut to their head and tail. */
const HEAD = 800;
const TAIL = 200;
const LABELS = INTENTS.filter((i) => i !== "unknown");

const SYSTEM = [
  "You label the task a user message asks for. Answer with exactly one label and nothing else.",
  `Labels: ${LABELS.join(", ")}.`,
  "qa: a factual question; chitchat: greetings and small talk; multi_hop_reasoning: a question that needs several reasoning steps.",
].join("\n");

function lastUserText(messages: readonly Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== "user") continue;
    if (typeof m.content === "string") return m.content;
    if (m.content === null) return "";
    return m.content.map((p) => (p.type === "text" ? p.text : "")).join("\n");
  }
  return "";
}

/** The chat request the edge agent gets (OpenAI schema, greedy, a few tokens). */
export function labellingRequest(messages: readonly Message[], model: string): Record<string, unknown> {
  let text = lastUserText(messages);
  if (text.length > HEAD + TAIL) text = `${text.slice(0, HEAD)}\n…\n${text.slice(-TAIL)}`;
  return {
    model,
    messages: [
      { role: "system", content: SYSTEM },
      { role: "user", content: `Message:\n"""\n${text}\n"""\nLabel:` },
    ],
    max_tokens: 8,
    temperature: 0,
  };
}

const LABEL_PATTERN = new RegExp(`(?<![a-z_])(${LABELS.map((l) => l.replace(/_/g, "[ _-]?")).join("|")})(?![a-z_])`);

/** The first intent label in a model's answer ("Label: code_gen", "math.", "Extract entity"), if any. */
export function parseIntentLabel(answer: string): Intent | undefined {
  const match = LABEL_PATTERN.exec(answer.toLowerCase());
  if (!match?.[1]) return undefined;
  const label = match[1].replace(/[ -]/g, "_");
  return LABELS.find((l) => l === label || l.replace(/_/g, "") === label.replace(/_/g, ""));
}
