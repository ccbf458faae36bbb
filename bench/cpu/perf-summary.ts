/**
 * Sums up `perf script` output of a process recorded by `cpu/variants.ts --perf` (JavaScript
 * frames named through `--perf-basic-prof`): sampled µs per request by thread, by where the
 * sample's leaf was (kernel, JIT code, the rest of the binary), by innermost JavaScript frame,
 * and — given a second recording — the leaf functions that differ most per request.
 *
 *   perf script -i A.perf.data -F comm,tid,ip,sym,dso > A.txt   (and B.txt)
 *   node --import tsx bench/cpu/perf-summary.ts --requests 3000 --hz 10000 A.txt [B.txt]
 *
 * Sampling with call stacks slows the process (bench/RESULTS.md, eleventh pass): read the µs as
 * shares and ratios, not as the process's cost.
 */
import { readFileSync } from "node:fs";
import { numberArg } from "../processes.ts";

interface Frame {
  sym: string;
  dso: string;
}
interface Sample {
  tid: string;
  stack: Frame[]; // leaf first
}

const REQUESTS = numberArg("requests", 3000);
const HZ = numberArg("hz", 10_000);
const files = process.argv.slice(2).filter((a, i, all) => !a.startsWith("--") && !all[i - 1]?.startsWith("--"));

function load(file: string): Sample[] {
  const samples: Sample[] = [];
  let current: Sample | undefined;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.trim() === "") {
      if (current) samples.push(current);
      current = undefined;
    } else if (!/^\s/.test(line)) {
      current = { tid: line.trim().split(/\s+/)[1] ?? "?", stack: [] };
    } else {
      const m = /^\s*[0-9a-f]+\s+(.*)\s+\((.*)\)$/.exec(line);
      if (m && current) current.stack.push({ sym: m[1] ?? "", dso: m[2] ?? "" });
    }
  }
  if (current) samples.push(current);
  return samples;
}

const isJs = (f: Frame) => f.dso.includes("perf-");
const usPerRequest = (n: number) => (n * 1e6) / HZ / REQUESTS;
const top = (counts: Map<string, number>, n: number) => [...counts].sort((a, b) => b[1] - a[1]).slice(0, n);
function count<T>(items: Iterable<T>, key: (x: T) => string | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const x of items) {
    const k = key(x);
    if (k !== undefined) out.set(k, (out.get(k) ?? 0) + 1);
  }
  return out;
}

/** The leaf's place: kernel, JavaScript (JIT code), or the binary and its libraries. */
function where(s: Sample): string {
  const leaf = s.stack[0];
  if (!leaf) return "unknown";
  if (leaf.dso.includes("kernel")) return "kernel";
  if (isJs(leaf)) return "JavaScript";
  return leaf.dso.split("/").pop() ?? leaf.dso;
}
const innermostJs = (s: Sample) => s.stack.find(isJs)?.sym ?? "(no JavaScript frame)";
const leafName = (s: Sample) => {
  const leaf = s.stack[0];
  if (!leaf) return "unknown";
  if (leaf.dso.includes("kernel")) return "(kernel)";
  return isJs(leaf) ? (leaf.sym.split(" ")[0] ?? leaf.sym) : leaf.sym.replace(/\(.*$/, "").slice(0, 90);
};

function summary(file: string, samples: Sample[]): void {
  console.log(`\n## ${file}: ${samples.length} samples, ${usPerRequest(samples.length).toFixed(1)} sampled µs per request\n`);
  const line = (counts: Map<string, number>, n: number) =>
    top(counts, n).map(
      ([k, v]) => `  ${usPerRequest(v).toFixed(2).padStart(7)} µs  ${(((v / samples.length) * 100).toFixed(1) + " %").padStart(7)}  ${k.slice(0, 140)}`,
    );
  console.log(
    [
      "by thread:",
      ...line(
        count(samples, (s) => s.tid),
        6,
      ),
    ].join("\n"),
  );
  console.log(["leaf in:", ...line(count(samples, where), 8)].join("\n"));
  console.log(["innermost JavaScript frame:", ...line(count(samples, innermostJs), 30)].join("\n"));
}

const [a, b] = files.map((f) => [f, load(f)] as const);
if (!a) throw new Error("usage: perf-summary.ts --requests N --hz HZ A.txt [B.txt]");
summary(a[0], a[1]);
if (b) {
  summary(b[0], b[1]);
  const [ca, cb] = [count(a[1], leafName), count(b[1], leafName)];
  const diff = new Map([...new Set([...ca.keys(), ...cb.keys()])].map((k) => [k, (cb.get(k) ?? 0) - (ca.get(k) ?? 0)]));
  console.log(`\n## leaf functions, ${b[0]} minus ${a[0]}, sampled µs per request\n`);
  for (const [k, v] of top(diff, 30)) console.log(`  ${usPerRequest(v).toFixed(2).padStart(7)} µs  ${k}`);
}
