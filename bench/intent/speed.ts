/**
 * Throughput of classifyIntent on one core, for ~200-character prompts:
 *   node --import tsx bench/intent/speed.ts
 * Reports the whole pipeline on a mix of prompts, and the model alone (prompts no rule catches).
 */
import type { Message } from "../../common/canonical/types.ts";
import { classifyIntent } from "../../extproc/routing/intent/classify.ts";
import { predictIntent } from "../../extproc/routing/intent/model.ts";

const PROMPTS = [
  "Could you help me understand why the sky looks blue during the day but red and orange at sunset? I keep hearing about scattering but I never really got what it means in practice.",
  "Summarize the following meeting notes: the team agreed to move the launch to next Tuesday, Alice owns the rollout checklist, Bob will handle the customer emails and Carol reviews the pricing page.",
  "Translate into French: the quarterly report shows revenue up eleven percent, driven mostly by the new subscription plans in Europe and Asia.",
  "我们公司最近在考虑把数据库从自建的MySQL迁移到云上的托管服务，你觉得需要注意哪些问题？比如成本、停机时间、数据一致性和团队技能方面，有没有什么经验可以分享的？",
  "def parse(line):\n    parts = line.split(',')\n    return {'id': int(parts[0]), 'name': parts[1]}\n\nThis crashes on some rows of my file, what is wrong with it and how do I fix it?",
  "What would be a good way to spend a rainy Sunday afternoon in a small town where most of the shops are closed and I do not have a car to drive anywhere further away?",
  "I am planning a small dinner party for eight people this weekend and one of the guests is vegetarian while another cannot eat gluten; what could I cook that everyone would enjoy?",
  "请总结一下这篇文章的主要观点：人工智能的发展正在改变各行各业，从医疗诊断到金融风控，越来越多的决策开始依赖数据驱动的模型。",
];
const MODEL_ONLY = [PROMPTS[0] ?? "", PROMPTS[3] ?? "", PROMPTS[5] ?? "", PROMPTS[6] ?? ""];

function bench(name: string, fn: (i: number) => unknown, iterations: number): void {
  for (let i = 0; i < 20_000; i++) fn(i);
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) fn(i);
  const ns = Number(process.hrtime.bigint() - start);
  console.log(`${name}: ${Math.round((iterations / ns) * 1e9).toLocaleString("en-US")} classifications/s (${(ns / iterations / 1000).toFixed(2)} µs each)`);
}

const requests: Message[][] = PROMPTS.map((p) => [
  { role: "system", content: "You are a helpful assistant." },
  { role: "user", content: p },
]);
console.log(`mean prompt length: ${Math.round(PROMPTS.reduce((s, p) => s + p.length, 0) / PROMPTS.length)} chars`);
bench("classifyIntent, mixed prompts", (i) => classifyIntent(requests[i % requests.length] ?? []), 400_000);
bench("classifyIntent, prompts no rule catches", (i) => classifyIntent(requests[[0, 3, 5, 6][i % 4] ?? 0] ?? []), 300_000);
bench("model alone", (i) => predictIntent(MODEL_ONLY[i % MODEL_ONLY.length] ?? ""), 300_000);
