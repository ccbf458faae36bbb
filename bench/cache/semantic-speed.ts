/**
 * Semantic cache index speed: the worker-thread usearch index (`extproc/cache/semantic/index-client.ts`)
 * filled with L2-normalised vectors in one scope, then searched one query at a time.
 *   node --import tsx bench/cache/semantic-speed.ts [--vectors questions|random] [--sizes 100000,1000000]
 *     [--quantization i8,f16] [--expansion-search 64] [--queries 2000] [--add-threads 2] [--k 4]
 *     [--dims 256 (random only)] [--data ../shared/data/paraphrase]
 *
 * `--vectors questions` (default): the real question texts of the paraphrase sets (all five, both
 * sides, deduplicated) embedded by the built-in `HashedEmbedder` (its dimensions: 384), and each
 * entry a near-paraphrase of one of them: normalize(base + noise), the base cycled over the
 * questions in a shuffled order, the noise a gaussian direction scaled for a cosine to the base
 * drawn uniformly from 0.90–0.97. So the index holds clusters of near-duplicates around real,
 * overlapping questions, as a cache's traffic does. `--vectors random`: uniformly random unit
 * vectors (`--dims`, default 256), HNSW's worst case (no neighbourhood structure).
 *
 * Per (quantization, size, expansion_search): insert rate (adds in batches of 10,000 through the
 * client, each batch awaited), lookup p50/p99 through the client (postMessage round trip + search)
 * and of the usearch search alone inside the worker, recall@1 of a query that is a stored entry
 * moved to cosine ≈ 0.98 (its source must come back first), and memory: process RSS growth over
 * the build (main + worker + native index), the worker's JS heap, the main heap. Goal: p99 < 1 ms
 * at 1M, ≤ 1 GB. expansion_search is fixed when a scope's index is created, so each value is a
 * build of its own.
 */
import { availableParallelism, loadavg } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { mulberry32 } from "../../edge-agent/engines/llamacpp-sampling.ts";
import { HashedEmbedder } from "../../extproc/cache/semantic/hashed-embedder.ts";
import { WorkerIndex } from "../../extproc/cache/semantic/index-client.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import { loadDatasets } from "./paraphrase-data.ts";

const { values } = parseArgs({
  options: {
    vectors: { type: "string", default: "questions" },
    dims: { type: "string" },
    data: { type: "string", default: path.resolve(import.meta.dirname, "../../../shared/data/paraphrase") },
    "expansion-search": { type: "string", default: "64" },
    sizes: { type: "string", default: "100000,1000000" },
    quantization: { type: "string", default: "i8,f16" },
    queries: { type: "string", default: "2000" },
    "add-threads": { type: "string", default: String(Math.min(2, availableParallelism())) },
    k: { type: "string", default: "4" },
  },
});
const VECTORS = values.vectors;
if (VECTORS !== "questions" && VECTORS !== "random") throw new Error(`--vectors questions|random, not ${VECTORS}`);
const EMBEDDER = new HashedEmbedder();
if (VECTORS === "questions" && values.dims !== undefined && Number(values.dims) !== EMBEDDER.dimensions) {
  throw new Error(`--vectors questions uses the built-in embedder's ${EMBEDDER.dimensions} dimensions; --dims ${values.dims} is for --vectors random`);
}
const DIMS = VECTORS === "questions" ? EMBEDDER.dimensions : Number(values.dims ?? "256");
const EFS = values["expansion-search"].split(",").map(Number);
const SIZES = values.sizes.split(",").map(Number);
const QUANTS = values.quantization.split(",") as ("i8" | "f16")[];
const QUERIES = Number(values.queries);
const ADD_THREADS = Number(values["add-threads"]);
const K = Number(values.k);
const BATCH = 10_000;
const MB = 1024 * 1024;

function randomUnit(next: () => number): Float32Array {
  const v = new Float32Array(DIMS);
  let norm = 0;
  for (let i = 0; i < DIMS; i++) {
    // Box–Muller: a direction uniform on the sphere.
    const g = Math.sqrt(-2 * Math.log(next() || 1e-12)) * Math.cos(2 * Math.PI * next());
    v[i] = g;
    norm += g * g;
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < DIMS; i++) v[i]! /= norm;
  return v;
}

/** `v` moved a little (cosine ≈ 0.98 to it), renormalised: a paraphrase's embedding. */
function perturb(v: Float32Array, next: () => number): Float32Array {
  const noise = randomUnit(next);
  const out = new Float32Array(DIMS);
  let norm = 0;
  for (let i = 0; i < DIMS; i++) {
    out[i] = v[i]! + 0.2 * noise[i]!;
    norm += out[i]! * out[i]!;
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < DIMS; i++) out[i]! /= norm;
  return out;
}

/** `v` plus `noise` (a unit direction) scaled so the cosine to `v` is about `cosine`, renormalised. */
function moveTo(v: Float32Array, noise: Float32Array, cosine: number): Float32Array {
  // For noise orthogonal to v (nearly so in high dimensions): cos = 1 / sqrt(1 + t²).
  const t = Math.sqrt(1 / (cosine * cosine) - 1);
  const out = new Float32Array(DIMS);
  let norm = 0;
  for (let i = 0; i < DIMS; i++) {
    out[i] = v[i]! + t * noise[i]!;
    norm += out[i]! * out[i]!;
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < DIMS; i++) out[i]! /= norm;
  return out;
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** The real questions' vectors (deduplicated texts, zero vectors dropped), in a shuffled order. */
function questionVectors(): { vectors: Float32Array[]; texts: number } {
  const texts = new Set<string>();
  for (const { pairs } of loadDatasets(values.data)) {
    for (const p of pairs) {
      for (const t of [p.stored, p.query]) if (t.trim() !== "") texts.add(t.trim());
    }
  }
  const vectors = [...texts].map((t) => EMBEDDER.embedOne(t)).filter((v) => v.some((x) => x !== 0));
  const next = mulberry32(7);
  for (let i = vectors.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [vectors[i], vectors[j]] = [vectors[j]!, vectors[i]!];
  }
  return { vectors, texts: texts.size };
}

const QUESTIONS = VECTORS === "questions" ? questionVectors() : undefined;

/** Entry `i`'s vector: a near-paraphrase of a real question (cosine 0.90–0.97 to it), or a random direction. */
function entryVector(i: number, next: () => number, similarity: { sum: number; min: number; max: number; n: number }): Float32Array {
  if (!QUESTIONS) return randomUnit(next);
  const base = QUESTIONS.vectors[i % QUESTIONS.vectors.length]!;
  const v = moveTo(base, randomUnit(next), 0.9 + 0.07 * next());
  const c = dot(v, base);
  similarity.sum += c;
  similarity.n++;
  if (c < similarity.min) similarity.min = c;
  if (c > similarity.max) similarity.max = c;
  return v;
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

async function run(quantization: "i8" | "f16", size: number, expansionSearch: number): Promise<string> {
  globalThis.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const searchMicros: number[] = [];
  let recording = false;
  const index = new WorkerIndex({
    dimensions: DIMS,
    quantization,
    addThreads: ADD_THREADS,
    expansionSearch,
    logger: silentLogger(),
    observeSearch: (us) => void (recording && searchMicros.push(us)),
  });
  const next = mulberry32(42);
  const similarity = { sum: 0, min: 1, max: -1, n: 0 };
  const probes: { id: string; vector: Float32Array }[] = [];
  const probeEvery = Math.max(1, Math.floor(size / QUERIES));
  const started = performance.now();
  for (let base = 0; base < size; base += BATCH) {
    for (let i = base; i < Math.min(size, base + BATCH); i++) {
      const vector = entryVector(i, next, similarity);
      index.add("scope", `e${i}`, vector);
      if (i % probeEvery === 0 && probes.length < QUERIES) probes.push({ id: `e${i}`, vector });
    }
    await index.flush();
  }
  const buildS = (performance.now() - started) / 1000;
  const stats = await index.stats();
  const rssAfter = process.memoryUsage().rss;

  // Warm-up, then timed lookups one at a time (as requests arrive), perturbed probes.
  const queries = probes.map((p) => ({ id: p.id, vector: perturb(p.vector, next) }));
  const querySimilarity = queries.reduce((sum, q, i) => sum + dot(q.vector, probes[i]!.vector), 0) / queries.length;
  const entries =
    similarity.n > 0
      ? `entry~base cosine mean ${(similarity.sum / similarity.n).toFixed(3)} (min ${similarity.min.toFixed(3)}, max ${similarity.max.toFixed(3)}); `
      : "";
  notes.push(`${quantization} ${size.toLocaleString("en-US")} ef ${expansionSearch}: ${entries}query~source cosine mean ${querySimilarity.toFixed(3)}`);
  for (const q of queries.slice(0, 200)) await index.search("scope", q.vector, K);
  recording = true;
  const client: number[] = [];
  let recalled = 0;
  for (const q of queries) {
    const t0 = performance.now();
    const hits = await index.search("scope", q.vector, K);
    client.push((performance.now() - t0) * 1000);
    if (hits[0]?.id === q.id) recalled++;
  }
  recording = false;
  client.sort((a, b) => a - b);
  searchMicros.sort((a, b) => a - b);
  await index.close();
  const heapMb = process.memoryUsage().heapUsed / MB;
  return `| ${quantization} | ${size.toLocaleString("en-US")} | ${expansionSearch} | ${buildS.toFixed(1)} | ${Math.round(size / buildS).toLocaleString("en-US")} | ${pct(client, 0.5).toFixed(0)} | ${pct(client, 0.99).toFixed(0)} | ${pct(searchMicros, 0.5).toFixed(0)} | ${pct(searchMicros, 0.99).toFixed(0)} | ${((100 * recalled) / queries.length).toFixed(1)} % | ${((rssAfter - rssBefore) / MB).toFixed(0)} | ${(rssAfter / MB).toFixed(0)} | ${(stats.workerHeapBytes / MB).toFixed(0)} | ${heapMb.toFixed(0)} |`;
}

const notes: string[] = [];
const source = QUESTIONS
  ? `questions (${QUESTIONS.texts.toLocaleString("en-US")} distinct texts, ${QUESTIONS.vectors.length.toLocaleString("en-US")} non-zero vectors, ${EMBEDDER.name})`
  : "random";
console.log(
  `vectors ${source}, dims ${DIMS}, k ${K}, ${QUERIES} queries, add threads ${ADD_THREADS}, ${availableParallelism()} cores, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`,
);
console.log(
  "| quant | entries | ef search | build s | adds/s | client p50 µs | client p99 µs | search p50 µs | search p99 µs | recall@1 | RSS growth MB | RSS MB | worker heap MB | main heap MB |",
);
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const size of SIZES) for (const quantization of QUANTS) for (const ef of EFS) console.log(await run(quantization, size, ef));
for (const note of notes) console.log(note);
console.log(
  `load average after: ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`,
);
