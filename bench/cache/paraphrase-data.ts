/**
 * The paraphrase sets of ../shared/data/paraphrase as (stored, query, label) pairs: `stored` goes
 * into the cache, `query` looks it up; `label` true = the same question, false = must not hit,
 * undefined = stored but not queried (STS-B scores between 2 and 4).
 */
import { readFileSync } from "node:fs";
import path from "node:path";

export interface Pair {
  stored: string;
  query: string;
  label: boolean | undefined;
}

export interface Dataset {
  name: string;
  pairs: Pair[];
}

function tsvRows(file: string): string[][] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => l.split("\t"));
}

export function loadDatasets(dir: string): Dataset[] {
  const qqp = JSON.parse(readFileSync(path.join(dir, "qqp-dev-5k.json"), "utf8")) as { text_a: string; text_b: string; label: number }[];
  const mock = JSON.parse(readFileSync(path.join(dir, "gptcache-mock.json"), "utf8")) as { origin: string; similar: string }[];
  const stsb = tsvRows(path.join(dir, "stsb-dev.tsv")).map((c) => ({ score: Number(c[4]), a: c[5] ?? "", b: c[6] ?? "" }));
  const lcqmc = tsvRows(path.join(dir, "lcqmc-dev.tsv"));
  const paws = tsvRows(path.join(dir, "pawsx-zh-dev.tsv")).slice(1);
  return [
    { name: "QQP dev 5k", pairs: qqp.map((p) => ({ stored: p.text_a, query: p.text_b, label: p.label === 1 })) },
    { name: "GPTCache mock", pairs: mock.map((p) => ({ stored: p.origin, query: p.similar, label: true })) },
    {
      name: "STS-B dev",
      pairs: stsb
        .filter((r) => Number.isFinite(r.score))
        .map((r) => ({ stored: r.a, query: r.b, label: r.score >= 4 ? true : r.score <= 2 ? false : undefined })),
    },
    { name: "LCQMC dev", pairs: lcqmc.map((c) => ({ stored: c[0] ?? "", query: c[1] ?? "", label: c[2]?.trim() === "1" })) },
    { name: "PAWS-X zh dev", pairs: paws.map((c) => ({ stored: c[1] ?? "", query: c[2] ?? "", label: c[3]?.trim() === "1" })) },
  ];
}
