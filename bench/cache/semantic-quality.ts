/**
 * Semantic-cache quality over the paraphrase sets in ../shared/data/paraphrase (see its README):
 * QQP dev 5k, GPTCache's mock data, STS-B dev (score ≥ 4 should hit, ≤ 2 must not; in between
 * not queried), LCQMC dev, PAWS-X zh dev.
 *
 * Per dataset, one side of every pair goes into one cache scope (identical texts are one entry);
 * the other side is the query. The lookup is the cache's: the k = 4 nearest entries (exact
 * brute-force cosine) at or above the threshold, best first, the first that passes the enabled
 * checks (entity guard, intent guard, fingerprint) is the hit. A hit on the query's own pair of a positive is
 * correct; any other hit (a negative pair's text, or another entry) is wrong — conservative: the
 * sets reuse sentences, and another pair's text may be a true paraphrase. Entries whose text is
 * the query's own (case and punctuation aside) are left out of its search: the exact cache
 * answers those, and they would say nothing about paraphrases.
 *
 *   node --import tsx bench/cache/semantic-quality.ts [--data DIR] [--embedder builtin] [--verify-url host:port --verify-model M]
 *
 * Prints, per dataset and threshold: the correct-hit rate on positives and the wrong share of all
 * hits, for each mode; then the summary at the shipped default threshold. "Pairwise" scores the
 * labelled pairs alone (query against its own pair's text: a hit when close enough and the checks
 * pass), free of the unlabelled other-entry hits that the search counts as wrong.
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_SEMANTIC_THRESHOLD } from "../../extproc/cache/semantic/semantic-cache.ts";
import { extractEntities, entitiesAgree, type Entities } from "../../extproc/cache/semantic/entity-guard.ts";
import { fingerprint, fingerprintsAgree, type Fingerprint } from "../../extproc/cache/semantic/fingerprint.ts";
import { HashedEmbedder } from "../../extproc/cache/semantic/hashed-embedder.ts";
import { EdgeVerifier } from "../../extproc/cache/semantic/verifier.ts";
import { loadDatasets, type Dataset } from "./paraphrase-data.ts";
import { intentsConflict } from "../../extproc/cache/semantic/semantic-cache.ts";
import { classifyIntent, type IntentResult } from "../../extproc/routing/intent/classify.ts";

const THRESHOLDS = [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.92, 0.94, 0.95, 0.96, 0.98];
const K = 4;
/** `shipped`: every check the gateway runs by default — entity guard, intent guard, fingerprint. */
const MODES = ["plain", "guard", "fingerprint", "guard+fingerprint", "shipped"] as const;
type Mode = (typeof MODES)[number];

const { values: args } = parseArgs({
  options: {
    data: { type: "string", default: path.resolve(import.meta.dirname, "../../../shared/data/paraphrase") },
    "verify-url": { type: "string" },
    "verify-model": { type: "string", default: "edge" },
    "verify-limit": { type: "string", default: "300" },
  },
});

interface Candidate {
  entry: number;
  similarity: number;
}

interface QueryResult {
  positive: boolean;
  own: number;
  /** Pairwise: the query's similarity to its own pair's text, and whether the checks pass on that pair. */
  pairSimilarity: number;
  pairGuard: boolean;
  pairPrint: boolean;
  pairIntent: boolean;
  /** Per mode, the first candidate passing that mode's checks (undefined: none among the k nearest). */
  first: Record<Mode, Candidate | undefined>;
}

const embedder = new HashedEmbedder();

function embedAll(texts: readonly string[]): { matrix: Float32Array; micros: number } {
  const d = embedder.dimensions;
  const matrix = new Float32Array(texts.length * d);
  const started = performance.now();
  texts.forEach((t, i) => matrix.set(embedder.embedOne(t), i * d));
  return { matrix, micros: ((performance.now() - started) * 1000) / Math.max(1, texts.length) };
}

/** Text as the exact cache would see two questions as one: case, width, spaces and punctuation aside. */
function same(text: string): string {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[\s\p{P}\p{S}]+/gu, "");
}

/** The k nearest entries of `q` by dot product (vectors are unit length), best first, `skip` aside. */
function nearest(matrix: Float32Array, count: number, q: Float32Array, skip: ReadonlySet<number>): Candidate[] {
  const d = q.length;
  const best: Candidate[] = [];
  for (let e = 0; e < count; e++) {
    if (skip.has(e)) continue;
    let s = 0;
    const o = e * d;
    for (let i = 0; i < d; i++) s += (matrix[o + i] ?? 0) * (q[i] ?? 0);
    if (best.length < K || s > (best[best.length - 1]?.similarity ?? -2)) {
      best.push({ entry: e, similarity: s });
      best.sort((x, y) => y.similarity - x.similarity);
      if (best.length > K) best.pop();
    }
  }
  return best;
}

function evaluate(dataset: Dataset): { results: QueryResult[]; micros: number; entries: string[] } {
  const entries: string[] = [];
  const ids = new Map<string, number>();
  const ownOf = dataset.pairs.map((p) => {
    let id = ids.get(p.stored);
    if (id === undefined) ids.set(p.stored, (id = entries.push(p.stored) - 1));
    return id;
  });
  const { matrix, micros } = embedAll(entries);
  const bySame = new Map<string, number[]>();
  entries.forEach((t, e) => {
    const key = same(t);
    bySame.set(key, [...(bySame.get(key) ?? []), e]);
  });
  const entities: Entities[] = entries.map(extractEntities);
  const prints: Fingerprint[] = entries.map(fingerprint);
  const intents: IntentResult[] = entries.map((e) => classifyIntent([{ role: "user", content: e }]));
  const results: QueryResult[] = [];
  dataset.pairs.forEach((pair, i) => {
    if (pair.label === undefined) return;
    const q = embedder.embedOne(pair.query);
    // Entries with the query's very text (from other pairs) are the exact cache's hits, not a paraphrase's.
    const skip = new Set((bySame.get(same(pair.query)) ?? []).filter((e) => e !== ownOf[i]));
    const candidates = nearest(matrix, entries.length, q, skip);
    const qe = extractEntities(pair.query);
    const qf = fingerprint(pair.query);
    const guardOk = (c: Candidate) => entitiesAgree(qe, pair.query, entities[c.entry] ?? qe, entries[c.entry] ?? "").ok;
    const printOk = (c: Candidate) => fingerprintsAgree(qf, prints[c.entry] ?? qf).ok;
    const qi = classifyIntent([{ role: "user", content: pair.query }]);
    const intentOk = (c: Candidate) => !intentsConflict(qi, intents[c.entry] ?? qi);
    const own = ownOf[i] ?? -1;
    let pairSimilarity = 0;
    for (let d = 0; d < q.length; d++) pairSimilarity += (q[d] ?? 0) * (matrix[own * q.length + d] ?? 0);
    const ownCandidate = { entry: own, similarity: pairSimilarity };
    results.push({
      positive: pair.label,
      own,
      pairSimilarity,
      pairGuard: guardOk(ownCandidate),
      pairPrint: printOk(ownCandidate),
      pairIntent: intentOk(ownCandidate),
      first: {
        plain: candidates[0],
        guard: candidates.find(guardOk),
        fingerprint: candidates.find(printOk),
        "guard+fingerprint": candidates.find((c) => guardOk(c) && printOk(c)),
        shipped: candidates.find((c) => guardOk(c) && intentOk(c) && printOk(c)),
      },
    });
  });
  return { results, micros, entries };
}

interface Score {
  positives: number;
  correct: number;
  wrong: number;
  /** Wrong hits on the query's own pair (a negative pair's text); the rest hit another entry. */
  wrongOwn: number;
}

function score(results: readonly QueryResult[], mode: Mode, threshold: number, verified?: ReadonlySet<number>): Score {
  const s: Score = { positives: 0, correct: 0, wrong: 0, wrongOwn: 0 };
  results.forEach((r, i) => {
    if (r.positive) s.positives++;
    const hit = r.first[mode];
    if (!hit || hit.similarity < threshold || (verified && !verified.has(i))) return;
    if (r.positive && hit.entry === r.own) s.correct++;
    else {
      s.wrong++;
      if (hit.entry === r.own) s.wrongOwn++;
    }
  });
  return s;
}

/** Pairwise, labelled pairs only: a pair "hits" when its two texts are close enough and pass the checks. */
function pairwise(results: readonly QueryResult[], checks: boolean, threshold: number): Score {
  const s: Score = { positives: 0, correct: 0, wrong: 0, wrongOwn: 0 };
  for (const r of results) {
    if (r.positive) s.positives++;
    if (r.pairSimilarity < threshold || (checks && !(r.pairGuard && r.pairPrint && r.pairIntent))) continue;
    if (r.positive) s.correct++;
    else s.wrong++;
  }
  s.wrongOwn = s.wrong;
  return s;
}

const pct = (n: number, d: number) => (d === 0 ? "–" : `${((100 * n) / d).toFixed(1)} %`);
const cell = (s: Score) => `${pct(s.correct, s.positives)} / ${pct(s.wrong, s.correct + s.wrong)}`;

async function verifiedHits(
  results: readonly QueryResult[],
  dataset: Dataset,
  entries: readonly string[],
  threshold: number,
): Promise<Set<number> | undefined> {
  const address = args["verify-url"];
  if (address === undefined) return undefined;
  const verifier = new EdgeVerifier({ address: () => address, model: args["verify-model"] ?? "edge", timeoutMs: 5_000, minConfidence: 0.5 });
  const queries = dataset.pairs.filter((p) => p.label !== undefined);
  const ok = new Set<number>();
  const limit = Number(args["verify-limit"]);
  let asked = 0;
  for (const [i, r] of results.entries()) {
    const hit = r.first.shipped;
    if (!hit || hit.similarity < threshold || asked++ >= limit) continue;
    const verdict = await verifier.verify(queries[i]?.query ?? "", entries[hit.entry] ?? "");
    if (verdict.kind === "same") ok.add(i);
  }
  return ok;
}

const datasets = loadDatasets(args.data);
const summary: string[] = [];
for (const dataset of datasets) {
  const { results, micros, entries } = evaluate(dataset);
  const positives = results.filter((r) => r.positive).length;
  console.log(`\n## ${dataset.name}: ${entries.length} entries, ${results.length} queries (${positives} positive), embed ${micros.toFixed(1)} µs/text`);
  console.log(`cells: correct-hit rate on positives / wrong share of all hits`);
  console.log(`| threshold | ${MODES.join(" | ")} | pairwise plain | pairwise shipped |`);
  console.log(`|---|${MODES.map(() => "---").join("|")}|---|---|`);
  for (const t of THRESHOLDS)
    console.log(
      `| ${t.toFixed(2)} | ${MODES.map((m) => cell(score(results, m, t))).join(" | ")} | ${cell(pairwise(results, false, t))} | ${cell(pairwise(results, true, t))} |`,
    );
  const t = DEFAULT_SEMANTIC_THRESHOLD;
  const plain = score(results, "plain", t);
  const guarded = score(results, "shipped", t);
  const verified = await verifiedHits(results, dataset, entries, t);
  const verify = verified ? cell(score(results, "shipped", t, verified)) : "not measured (no real model here)";
  const own = (x: Score) => (x.wrong === 0 ? "–" : pct(x.wrongOwn, x.wrong));
  summary.push(
    `| ${dataset.name} | ${positives} / ${results.length - positives} | ${cell(plain)} | ${cell(guarded)} | ${own(guarded)} | ${cell(pairwise(results, false, t))} | ${cell(pairwise(results, true, t))} | ${verify} |`,
  );
}
console.log(`\n## At the shipped default threshold ${DEFAULT_SEMANTIC_THRESHOLD}`);
console.log(
  `| dataset | positives / negatives | search: plain | search: shipped checks | its wrong hits on the own (negative) pair | pairwise: plain | pairwise: shipped checks | + verification |`,
);
console.log(`|---|---|---|---|---|---|---|---|`);
for (const line of summary) console.log(line);
if (args["verify-url"] === undefined) console.log("\nverification: not measured (no real model here); pass --verify-url host:port --verify-model M");
