/**
 * The demo's scripted traffic: what a mix of apps would send, in order. Each step says what it
 * shows; the table prints what Gearbox actually did (the tiny model's confidences decide the
 * upgrades, so a row may differ from its note on another machine).
 */

export interface DemoStep {
  /** Short label for the table. */
  label: string;
  /** What the step is meant to show. */
  shows: string;
  prompt: string;
  /** Default `gpt-4o-mini` (a cloud model). */
  model?: string;
  maxTokens?: number;
  /** `x-gearbox-route`. */
  route?: "edge" | "cloud";
  /** Send with the `trial` tenant's call key (a tenant with a tight request rate). */
  trialTenant?: boolean;
}

const LONG = [
  "We are migrating a payments service from a monolith to three services: ledger, payouts and risk.",
  "The ledger must stay strongly consistent, payouts retry against two banks with different SLAs,",
  "and risk scores every transfer within 50 ms. Compare an outbox pattern with change data capture",
  "for propagating ledger events, explain failure modes of each during a partial network partition,",
  "and recommend one with a rollout plan, the metrics to watch and how to roll back safely.",
].join(" ");

export const DEMO_SCRIPT: readonly DemoStep[] = [
  { label: "short summary", shows: "policy: summarize + low complexity → edge", prompt: "Summarize in one line: the meeting moved to Tuesday." },
  { label: "classify", shows: "policy → edge", prompt: "Classify this ticket as billing, bug or other: I was charged twice for March." },
  { label: "Chinese summary", shows: "Chinese text, policy → edge", prompt: "用一句话总结：会议改到周二下午三点，地点不变。" },
  { label: "code", shows: "policy: code_gen → cloud", prompt: "Write a Python function that parses a CSV file into a list of dictionaries, with unit tests." },
  { label: "math", shows: "policy: math → cloud", prompt: "Solve for x: 3x + 7 = 22. Show each step." },
  { label: "math (repeat)", shows: "identical request → exact cache hit", prompt: "Solve for x: 3x + 7 = 22. Show each step." },
  { label: "math paraphrase", shows: "a paraphrase → semantic cache hit", prompt: "Solve for x: 3x + 7 = 22. Show each step please." },
  { label: "long design", shows: "long, multi-part question: the policy weighs its complexity", prompt: LONG },
  {
    label: "code paraphrase",
    shows: "the code question reworded → semantic cache hit",
    prompt: "Please write a Python function that parses a CSV file into a list of dictionaries, with unit tests.",
  },
  { label: "forced edge", shows: "x-gearbox-route: edge → edge, never upgraded", prompt: "Hello there, who are you?", route: "edge", maxTokens: 16 },
  {
    label: "low confidence",
    shows: "edge answer below the threshold → upgraded to cloud",
    prompt: "Extract the names: Alice met Bob in Paris.",
    maxTokens: 32,
  },
  { label: "Chinese question", shows: "Chinese, auto", prompt: "解释一下什么是数据库索引，以及它为什么能加快查询？" },
  { label: "trial tenant 1", shows: "tenant 'trial' (1 request/s)", prompt: "Write a SQL query that counts orders per customer.", trialTenant: true },
  {
    label: "trial tenant 2",
    shows: "tenant 'trial' again within the second → 429",
    prompt: "Write a SQL query that lists customers without orders.",
    trialTenant: true,
  },
  { label: "trial tenant 3", shows: "and again → 429", prompt: "Write a SQL query that finds the top 5 customers by revenue.", trialTenant: true },
];
