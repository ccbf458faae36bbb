/**
 * `npm run bench:boundary`: the data boundary's figures.
 *  1. precision and recall per structured category over the generated corpus (`corpus.ts`);
 *  2. restoration exactness: every masked sample restored from a whole JSON answer and from an
 *     SSE stream cut at every character position (so each placeholder is split every way);
 *  3. detection + masking of a 2 KB prompt (a chat body with planted values): per-call latency
 *     percentiles, beside JSON.parse of the same body in the same run as the baseline.
 * `--write` also writes the corpus to bench/boundary/corpus.jsonl.
 */
import { writeFileSync } from "node:fs";
import { detect } from "../../extproc/boundary/detect.ts";
import { Masker, maskText, scanBody } from "../../extproc/boundary/mask.ts";
import { boundaryPolicy, dataBoundarySchema } from "../../extproc/boundary/policy.ts";
import { StreamRestorer } from "../../extproc/boundary/stream-restore.ts";
import { corpus, type Label } from "./corpus.ts";

const samples = corpus();
if (process.argv.includes("--write")) writeFileSync(new URL("corpus.jsonl", import.meta.url), samples.map((s) => JSON.stringify(s)).join("\n") + "\n");
const rules = { keywords: [], patterns: [], markers: [] };

// 1. Precision / recall.
const tally = new Map<Label, { tp: number; fp: number; fn: number }>();
const t = (l: Label) => tally.get(l) ?? (tally.set(l, { tp: 0, fp: 0, fn: 0 }), tally.get(l)!);
const misses: string[] = [];
for (const s of samples) {
  const found = detect(s.text, rules).filter((d) => d.category !== "keyword" && d.category !== "marker");
  const hit = new Set<number>();
  for (const d of found) {
    const i = s.spans.findIndex(([a, b, l]) => l === d.category && d.start < b && a < d.end);
    if (i >= 0 && !hit.has(i)) {
      hit.add(i);
      t(d.category as Label).tp++;
    } else {
      t(d.category as Label).fp++;
      if (misses.length < 12) misses.push(`FP ${d.category}: ${s.text.slice(d.start, d.end)}`);
    }
  }
  s.spans.forEach(([a, b, l], i) => {
    if (hit.has(i)) return;
    t(l).fn++;
    if (misses.length < 12) misses.push(`FN ${l}: ${s.text.slice(a, b)}`);
  });
}
console.log(
  `corpus: ${samples.length} sentences (seed 23), ${samples.reduce((n, s) => n + s.spans.length, 0)} planted values, ${samples.filter((s) => s.spans.length === 0).length} sentences with hard negatives only`,
);
console.log("category     planted  TP    FP  FN   precision  recall");
let all = { tp: 0, fp: 0, fn: 0 };
for (const [l, c] of [...tally].sort(([a], [b]) => a.localeCompare(b))) {
  all = { tp: all.tp + c.tp, fp: all.fp + c.fp, fn: all.fn + c.fn };
  console.log(
    `${l.padEnd(12)} ${String(c.tp + c.fn).padStart(7)} ${String(c.tp).padStart(5)} ${String(c.fp).padStart(4)} ${String(c.fn).padStart(3)}   ${((100 * c.tp) / (c.tp + c.fp)).toFixed(2).padStart(7)} %  ${((100 * c.tp) / (c.tp + c.fn)).toFixed(2).padStart(6)} %`,
  );
}
console.log(
  `${"all".padEnd(12)} ${String(all.tp + all.fn).padStart(7)} ${String(all.tp).padStart(5)} ${String(all.fp).padStart(4)} ${String(all.fn).padStart(3)}   ${((100 * all.tp) / (all.tp + all.fp)).toFixed(2).padStart(7)} %  ${((100 * all.tp) / (all.tp + all.fn)).toFixed(2).padStart(6)} %`,
);
for (const m of misses) console.log(`  ${m}`);

// 2. Restoration exactness.
const policy = boundaryPolicy(dataBoundarySchema.parse({ enable: true, secrets: "redact", pii: "redact" }), "bench", "chat_completions")!;
let restored = 0;
let checks = 0;
let streamChecks = 0;
for (const s of samples.slice(0, 1500)) {
  const m = new Masker(s.text);
  const masked = maskText(s.text, policy, m);
  checks++;
  const answer = Buffer.from(JSON.stringify({ choices: [{ message: { content: `ok: ${masked}` } }] }));
  const whole =
    (JSON.parse(m.restoreBody(answer).toString()) as { choices: [{ message: { content: string } }] }).choices[0].message.content === `ok: ${s.text}`;
  let streamOk = true;
  if (masked !== s.text) {
    const text = `ok: ${masked}`;
    for (let cut = 1; cut < text.length; cut++) {
      streamChecks++;
      const ev = (c: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: c }, finish_reason: null }] })}\n\n`;
      const r = new StreamRestorer(m);
      const out = r.push(Buffer.from(ev(text.slice(0, cut)) + ev(text.slice(cut)) + "data: [DONE]\n\n"), true).toString();
      const got = out
        .split("\n\n")
        .filter((e) => e.startsWith("data: {"))
        .map((e) => (JSON.parse(e.slice(6)) as { choices: [{ delta: { content?: string } }] }).choices[0].delta.content ?? "")
        .join("");
      if (got !== `ok: ${s.text}`) streamOk = false;
    }
  }
  if (whole && streamOk) restored++;
}
console.log(
  `\nrestoration: ${restored}/${checks} samples exact (${((100 * restored) / checks).toFixed(2)} %), whole JSON and ${streamChecks} two-chunk streams cut at every position`,
);

// 3. Latency on a 2 KB prompt.
const filler = "The quarterly report covers revenue, churn and the roadmap for the next two releases. 季度报告包括收入、流失率以及接下来两个版本的路线图。 ";
let prompt = "";
let k = 0;
while (Buffer.byteLength(prompt) < 2048) prompt += k++ % 4 === 0 ? `${samples[k]!.text} ` : filler;
const body = {
  model: "gpt-4o-mini",
  messages: [
    { role: "system", content: "You are a helpful assistant." },
    { role: "user", content: prompt },
  ],
};
const raw = JSON.stringify(body);
console.log(`\nprompt: ${Buffer.byteLength(prompt)} bytes, ${detect(prompt, rules).length} planted values`);
const full = boundaryPolicy(
  dataBoundarySchema.parse({ enable: true, secrets: "redact", pii: "redact", confidential: "redact", keywords: ["Project Falcon"] }),
  "bench",
  "x",
)!;
function measure(name: string, f: () => unknown): void {
  for (let i = 0; i < 2000; i++) f();
  const times: number[] = [];
  for (let i = 0; i < 20000; i++) {
    const a = process.hrtime.bigint();
    f();
    times.push(Number(process.hrtime.bigint() - a) / 1000);
  }
  times.sort((x, y) => x - y);
  const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!.toFixed(1);
  console.log(`${name.padEnd(44)} p50 ${q(0.5).padStart(6)} µs  p99 ${q(0.99).padStart(6)} µs  p99.9 ${q(0.999).padStart(6)} µs`);
}
measure("baseline: JSON.parse of the body", () => JSON.parse(raw));
measure("detect + mask (pii, secrets redact)", () => scanBody(body, policy, raw));
measure("detect + mask (+ keywords and markers)", () => scanBody(body, full, raw));
