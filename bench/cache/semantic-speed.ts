/**
 * Semantic cache index speed: the worker-thread usearch index (`extproc/cache/semantic/index-client.ts`)
 * filled with random L2-normalised vectors in one scope, then searched one query at a time.
 *   node --import tsx bench/cache/semantic-speed.ts [--dims 256] [--sizes 100000,1000000]
 *     [--quantization i8,f16] [--queries 2000] [--add-threads 2] [--k 4]
 *
 * Per (quantization, size): insert rate (adds in batches of 10,000 through the client, each batch
 * awaited), lookup p50/p99 through the client (postMessage round trip + search) and of the usearch
 * search alone inside the worker, recall@1 of a query that is a slightly perturbed inserted vector,
 * and memory: process RSS growth over the build (main + worker + native index), the worker's JS
 * heap, the main heap. Goal: p99 < 1 ms at 1M, ≤ 1 GB.
 */
import { availableParallelism, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { mulberry32 } from "../../edge-agent/engines/llamacpp-sampling.ts";
import { WorkerIndex } from "../../extproc/cache/semantic/index-client.ts";
import { silentLogger } from "../../extproc/telemetry/logger.ts";

const { values } = parseArgs({
  options: {
    dims: { type: "string", default: "256" },
    sizes: { type: "string", default: "100000,1000000" },
    quantization: { type: "string", default: "i8,f16" },
    queries: { type: "string", default: "2000" },
    "add-threads": { type: "string", default: String(Math.min(2, availableParallelism())) },
    k: { type: "string", default: "4" },
  },
});
const DIMS = Number(values.dims);
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

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

async function run(quantization: "i8" | "f16", size: number): Promise<string> {
  globalThis.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const searchMicros: number[] = [];
  let recording = false;
  const index = new WorkerIndex({
    dimensions: DIMS,
    quantization,
    addThreads: ADD_THREADS,
    logger: silentLogger(),
    observeSearch: (us) => void (recording && searchMicros.push(us)),
  });
  const next = mulberry32(42);
  const probes: { id: string; vector: Float32Array }[] = [];
  const probeEvery = Math.max(1, Math.floor(size / QUERIES));
  const started = performance.now();
  for (let base = 0; base < size; base += BATCH) {
    for (let i = base; i < Math.min(size, base + BATCH); i++) {
      const vector = randomUnit(next);
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
  return `| ${quantization} | ${size.toLocaleString("en-US")} | ${buildS.toFixed(1)} | ${Math.round(size / buildS).toLocaleString("en-US")} | ${pct(client, 0.5).toFixed(0)} | ${pct(client, 0.99).toFixed(0)} | ${pct(searchMicros, 0.5).toFixed(0)} | ${pct(searchMicros, 0.99).toFixed(0)} | ${((100 * recalled) / queries.length).toFixed(1)} % | ${((rssAfter - rssBefore) / MB).toFixed(0)} | ${(rssAfter / MB).toFixed(0)} | ${(stats.workerHeapBytes / MB).toFixed(0)} | ${heapMb.toFixed(0)} |`;
}

console.log(`dims ${DIMS}, k ${K}, ${QUERIES} queries, add threads ${ADD_THREADS}, ${availableParallelism()} cores, load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
console.log("| quant | entries | build s | adds/s | client p50 µs | client p99 µs | search p50 µs | search p99 µs | recall@1 | RSS growth MB | RSS MB | worker heap MB | main heap MB |");
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const size of SIZES) for (const quantization of QUANTS) console.log(await run(quantization, size));
console.log(`load average after: ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
