/**
 * Micro speed check (not a test): decisions per second for `estimateComplexity` +
 * `decidePolicy` on a 200-character prompt, with the brief's rules and a dynamic step.
 *
 *   node --import tsx extproc/routing/policy/policy.bench.ts
 */
import type { Message } from "../../../common/canonical/types.ts";
import { estimateComplexity } from "../complexity.ts";
import { policyConfigFrom } from "./config.ts";
import { decidePolicy } from "./decide.ts";
import type { PolicyInput } from "./types.ts";

const PROMPT =
  "Please explain why the following function is slow and suggest a faster approach: it loops over every pair of items in a list of 10000 orders to find duplicates, then sorts them by date for the report. 这个怎么优化？";
const PROMPT200 = PROMPT.padEnd(200, " ").slice(0, 200);
const messages: Message[] = [
  { role: "system", content: "You are a helpful assistant." },
  { role: "user", content: PROMPT200 },
];
const config = policyConfigFrom({
  rules: [
    { when: { intent: ["summarize", "intent_classify", "extract_entity"], estimated_complexity: "low" }, target: "edge" },
    { when: { intent: ["code_gen", "multi_hop_reasoning", "math"] }, target: "cloud" },
  ],
  dynamic: { monthly_cloud_budget_usd: 1000, budget_steps: [{ spent_above: 0.6, threshold: 0.85 }], latency_steps: [] },
});

function once(): string {
  const complexity = estimateComplexity(messages);
  const input: PolicyInput = {
    intent: "qa",
    intentConfidence: 0.8,
    complexity: { score: complexity.score, level: complexity.level },
    hasTools: false,
    clientRoute: "auto",
    model: "gpt-4o-mini",
    edgeAvailable: true,
    budget: { cloudSpentFraction: 0.7 },
  };
  return decidePolicy(input, config).target;
}

function measure(label: string, fn: () => unknown, ms = 1500): void {
  for (let i = 0; i < 2000; i++) fn();
  let n = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ms) {
    for (let i = 0; i < 500; i++) fn();
    n += 500;
    now = performance.now();
  }
  const perSec = n / ((now - start) / 1000);
  console.log(`${label.padEnd(40)} ${Math.round(perSec).toLocaleString("en-US")} /s  (${(1e6 / perSec).toFixed(2)} µs each)`);
}

console.log(`prompt: ${PROMPT200.length} chars; node ${process.version}`);
measure("estimateComplexity + decidePolicy", once);
measure("estimateComplexity", () => estimateComplexity(messages));
const fixed: PolicyInput = {
  intent: "qa",
  intentConfidence: 0.8,
  complexity: { score: 0.4, level: "medium" },
  hasTools: false,
  clientRoute: "auto",
  model: "m",
  edgeAvailable: true,
};
measure("decidePolicy", () => decidePolicy(fixed, config));
