/**
 * `npm run bench:boundary`: the data boundary's figures.
 *  1. precision and recall per structured category over the generated corpus (`corpus.ts`);
 *  2. restoration exactness: every masked sample restored from a whole JSON answer and from an
 *     SSE stream cut at every character position (so each placeholder is split every way);
 *  3. detection + masking of 2 KB prompts (a chat body with planted values, and two without):
 *     per-call latency percentiles, beside JSON.parse of the same body in the same run.
 * `--write` also writes the corpus to bench/boundary/corpus.jsonl.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { detect } from "../../extproc/boundary/detect.ts";
import { Masker, maskText, scanBody } from "../../extproc/boundary/mask.ts";
import { boundaryPolicy, dataBoundarySchema } from "../../extproc/boundary/policy.ts";
import { StreamRestorer } from "../../extproc/boundary/stream-restore.ts";
import type { CustomRules } from "../../extproc/boundary/detect.ts";
import { corpus, personalCorpus, prng, type Label, type Sample } from "./corpus.ts";

const samples = corpus();
const rules: CustomRules = { keywords: [], patterns: [], markers: [] };
const withPersonal = { ...rules, personal: true };
const policy = boundaryPolicy(dataBoundarySchema.parse({ enable: true, secrets: "redact", pii: "redact" }), "bench", "chat_completions")!;
if (process.argv.includes("--latency")) {
  latency();
  process.exit(0);
}
if (process.argv.includes("--write"))
  writeFileSync(new URL("corpus.jsonl", import.meta.url), [...samples, ...personalCorpus()].map((s) => JSON.stringify(s)).join("\n") + "\n");

// 1. Precision / recall, per category: a detection is a TP when it overlaps a planted value of its category.
type Tally = Map<Label, { tp: number; fp: number; fn: number }>;
function score(set: readonly Sample[], with_: CustomRules, categories: readonly Label[], tally: Tally = new Map()): Tally {
  const t = (l: Label) => tally.get(l) ?? (tally.set(l, { tp: 0, fp: 0, fn: 0 }), tally.get(l)!);
  const misses: string[] = [];
  for (const s of set) {
    const found = detect(s.text, with_).filter((d) => (categories as readonly string[]).includes(d.category));
    const hit = new Set<number>();
    for (const d of found) {
      const i = s.spans.findIndex(([a, b, l]) => l === d.category && d.start < b && a < d.end);
      if (i >= 0 && !hit.has(i)) {
        hit.add(i);
        t(d.category as Label).tp++;
      } else {
        t(d.category as Label).fp++;
        if (misses.length < 40) misses.push(`FP ${d.category}: ${s.text.slice(d.start, d.end)}   (in: ${s.text})`);
      }
    }
    s.spans.forEach(([a, b, l], i) => {
      if (hit.has(i) || !categories.includes(l)) return;
      t(l).fn++;
      if (misses.length < 40) misses.push(`FN ${l}: ${s.text.slice(a, b)}   (in: ${s.text})`);
    });
  }
  for (const m of misses) console.log(`  ${m}`);
  return tally;
}
const pct = (a: number, b: number) => (b === 0 ? "-" : `${((100 * a) / b).toFixed(2)} %`);
function table(tally: Tally): void {
  console.log("category     planted  TP    FP  FN   precision  recall");
  let all = { tp: 0, fp: 0, fn: 0 };
  for (const [l, c] of [...tally].sort(([a], [b]) => a.localeCompare(b))) {
    all = { tp: all.tp + c.tp, fp: all.fp + c.fp, fn: all.fn + c.fn };
    console.log(
      `${l.padEnd(12)} ${String(c.tp + c.fn).padStart(7)} ${String(c.tp).padStart(5)} ${String(c.fp).padStart(4)} ${String(c.fn).padStart(3)}   ${pct(c.tp, c.tp + c.fp).padStart(9)}  ${pct(c.tp, c.tp + c.fn).padStart(8)}`,
    );
  }
  console.log(
    `${"all".padEnd(12)} ${String(all.tp + all.fn).padStart(7)} ${String(all.tp).padStart(5)} ${String(all.fp).padStart(4)} ${String(all.fn).padStart(3)}   ${pct(all.tp, all.tp + all.fp).padStart(9)}  ${pct(all.tp, all.tp + all.fn).padStart(8)}`,
  );
}
const STRUCTURED: Label[] = ["email", "phone", "national_id", "bank_card", "iban", "ip", "secret"];
console.log(
  `corpus: ${samples.length} sentences (seed 23), ${samples.reduce((n, s) => n + s.spans.length, 0)} planted values, ${samples.filter((s) => s.spans.length === 0).length} sentences with hard negatives only`,
);
table(score(samples, rules, STRUCTURED));
// Names and street addresses: their own corpus, and the structured one as more hard negatives.
const peopleSet = personalCorpus();
console.log(
  `\nnames and street addresses (personal: on): ${peopleSet.length} sentences (seed 2323), ${peopleSet.reduce((n, s) => n + s.spans.length, 0)} planted, ${peopleSet.filter((s) => s.spans.length === 0).length} with hard negatives only; then the ${samples.length} structured sentences as negatives`,
);
const personal = score(peopleSet, withPersonal, ["name", "address"]);
table(personal);
const before = [...personal.values()].reduce((n, c) => n + c.fp, 0);
score(samples, withPersonal, ["name", "address"], personal);
console.log(`the structured corpus's ${samples.length} sentences as more negatives: ${[...personal.values()].reduce((n, c) => n + c.fp, 0) - before} more FP`);

// Names on public text nobody labelled for this (STS-B dev: news, forums, captions; LCQMC dev: Chinese
// questions; PAWS-X zh dev: Wikipedia sentences translated), when ../shared/data is there: how many detections, and a seeded sample of 50 to judge by hand.
const shared = new URL("../../../shared/data/paraphrase/", import.meta.url);
if (["stsb-dev.tsv", "lcqmc-dev.tsv", "pawsx-zh-dev.tsv"].every((f) => existsSync(new URL(f, shared)))) {
  const rows = (file: string, cols: [number, number]) => [
    ...new Set(
      readFileSync(new URL(file, shared), "utf8")
        .split("\n")
        .flatMap((l) => l.split("\t").slice(...cols))
        .filter(Boolean),
    ),
  ];
  for (const [name, texts] of [
    ["STS-B dev", rows("stsb-dev.tsv", [5, 7])],
    ["LCQMC dev", rows("lcqmc-dev.tsv", [0, 2])],
    ["PAWS-X zh dev", rows("pawsx-zh-dev.tsv", [1, 3]).slice(1)],
  ] as const) {
    const hits = texts.flatMap((t) =>
      detect(t, withPersonal)
        .filter((d) => d.category === "name" || d.category === "address")
        .map((d) => `${d.category}: ${t.slice(d.start, d.end)}  ||  ${t.slice(0, 110)}`),
    );
    console.log(`\n${name}: ${texts.length} sentences, ${hits.length} name/address detections; a sample of ${Math.min(50, hits.length)}:`);
    const r = prng(7);
    for (const h of hits
      .map((h) => [r(), h] as const)
      .sort(([a], [b]) => a - b)
      .slice(0, 50))
      console.log(`  ${h[1]}`);
  }
}

// 2. Restoration exactness.
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

spawnSync(process.execPath, [...process.execArgv, "--expose-gc", fileURLToPath(import.meta.url), "--latency"], { stdio: "inherit" });

// 3. Latency, in a child process of its own (`--latency`): the quality runs above leave hundreds of
// megabytes of garbage whose collection would otherwise land in these timings.
function latency(): void {
  // 3. Latency on 2 KB prompts: prose of a support/ops chat in English and Chinese, (a) with four
  // planted values and their hard negatives, (b) with hard negatives only (dates, versions, order
  // numbers, a hash: no value to find), (c) prose alone. (b) and (c) are the common case.
  const prose = [
    "The quarterly report covers revenue, churn and the roadmap for the next two releases.",
    "Could you rewrite the following paragraph so that it reads more clearly for a customer audience?",
    "季度报告包括收入、流失率以及接下来两个版本的路线图。",
    "We moved the billing service behind the new gateway last week, and latency has been stable since.",
    "请帮我把这段说明改写得更简洁一些，面向的是第一次使用产品的客户。",
    "Summarize the discussion below and list the action items with their owners.",
    "The migration plan keeps the old endpoints running until every client has switched over.",
    "会议纪要如下，请整理出主要结论和待办事项。",
  ];
  const planted = samples.filter((s) => s.spans.length === 1);
  const negatives = samples.filter((s) => s.spans.length === 0);
  function promptOf(extra: readonly { text: string }[]): string {
    let out = "";
    let k = 0;
    for (let i = 0; Buffer.byteLength(out) < 2048; i++) out += (i % 5 === 4 && k < extra.length ? extra[k++]!.text : prose[i % prose.length]!) + " ";
    return out;
  }
  const prompts = {
    "4 planted values": promptOf(planted.slice(0, 4)),
    "hard negatives only": promptOf(negatives.slice(0, 4)),
    "2 names, 2 addresses": promptOf(
      personalCorpus()
        .filter((s) => s.spans.length === 1)
        .slice(0, 4),
    ),
    "prose only": promptOf([]),
  };
  const bodyOf = (prompt: string) => ({
    model: "gpt-4o-mini",
    messages: [
      { role: "system", content: "You are a helpful assistant for the operations team. Answer concisely." },
      { role: "user", content: prompt },
    ],
  });
  const full = boundaryPolicy(
    dataBoundarySchema.parse({ enable: true, secrets: "redact", pii: "redact", confidential: "redact", keywords: ["Project Falcon"] }),
    "bench",
    "x",
  )!;
  const people = boundaryPolicy(dataBoundarySchema.parse({ enable: true, secrets: "redact", pii: "redact", personal: "redact" }), "bench", "x")!;
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(" ");
  // Three runs of 50,000 calls each, a full collection before each run (the child runs with
  // --expose-gc); each run's percentiles are printed, so a noisy run shows as one.
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
  console.log(`\nload average before: ${load()}; per row 3 runs of 50,000 calls, each after 5,000 warm-up and a full GC`);
  function measure(name: string, f: () => unknown): void {
    const runs: string[][] = [];
    for (let run = 0; run < 3; run++) {
      for (let i = 0; i < 5000; i++) f();
      gc();
      const times = new Float64Array(50000);
      for (let i = 0; i < times.length; i++) {
        const a = process.hrtime.bigint();
        f();
        times[i] = Number(process.hrtime.bigint() - a) / 1000;
      }
      times.sort();
      const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!.toFixed(1);
      runs.push([q(0.5), q(0.99), q(0.999)]);
    }
    const col = (k: number) => runs.map((r) => r[k]!.padStart(5)).join(" /");
    console.log(`${name.padEnd(52)} p50 ${col(0)} µs  p99 ${col(1)} µs  p99.9 ${col(2)} µs`);
  }
  for (const [name, prompt] of Object.entries(prompts)) {
    const body = bodyOf(prompt);
    const raw = JSON.stringify(body);
    const values = detect(prompt, rules).length;
    const named = detect(prompt, withPersonal).length - values;
    console.log(`prompt "${name}": ${Buffer.byteLength(prompt)} bytes, ${values} structured values found (+${named} names and addresses)`);
    measure("  baseline: JSON.parse of the body", () => JSON.parse(raw));
    measure("  detect + mask (pii, secrets redact)", () => scanBody(body, policy, raw));
    measure("  detect + mask (+ a keyword and the markers)", () => scanBody(body, full, raw));
    measure("  detect + mask (pii, secrets, personal redact)", () => scanBody(body, people, raw));
  }
  console.log(`load average after: ${load()}`);
}
