/**
 * The decision path in process: a whole request cycle through `RequestProcessor` (request
 * headers, body — parse, policy, route, mutation —, response headers, body) with no I/O, for
 * three mixes: a cloud call the policy sends up, an edge call the policy keeps (the cascade's
 * confident verdict), and a client-forced edge. One core, no servers: what the decision and its
 * application cost per request.
 *
 *   node --import tsx bench/decision-path.bench.ts [--baseline DIR] [--rounds 5 --requests 20000 --batch 500]
 *
 * `--baseline DIR`: another checkout of Gearbox (e.g. `git worktree add /tmp/gearbox-base <rev>`
 * with `node_modules` linked) run in the same process in paired batches (alternating which goes
 * first), so the two are compared on the same machine at the same moment; the change is the median
 * of the pairs' ratios. It may be a tree from before the runtime snapshot
 * (`ProcessorDeps.config`) or after it (`ProcessorDeps.runtime`).
 */
import path from "node:path";
import { pathToFileURL } from "node:url";
import type * as ConfigLoad from "../extproc/config/load.ts";
import type * as Logging from "../common/telemetry/logger.ts";
import type * as RuntimeModule from "../extproc/runtime/runtime.ts";
import { numberArg } from "./processes.ts";
import { BRIEF_ROUTE_RULES } from "../test/support/brief-route.ts";

const ROUNDS = numberArg("rounds", 5);
const REQUESTS = numberArg("requests", 20_000);
const BATCH = numberArg("batch", 500);
const baselineIndex = process.argv.indexOf("--baseline");
const BASELINE = baselineIndex > 0 ? process.argv[baselineIndex + 1] : undefined;

const CONFIG = `
providers:
  - { name: openai, kind: openai, base_url: 'http://127.0.0.1:9/v1', api_key_env: K, models: [gpt-4o], pricing: { gpt-4o: { input: 2.5, output: 10 } } }
edge:
  agents: [{ address: '10.0.0.7:8088', models: [qwen-small] }]
  default_model: qwen-small
route:
  allow_client_route: true
${BRIEF_ROUTE_RULES}`;

const MIXES = {
  cloud: { content: "Write a Python function that parses ISO dates and handles time zones.", headers: {} },
  "edge (policy)": { content: "Summarize this in one line: the meeting moved to Friday because the room was booked.", headers: {} },
  "edge (forced)": { content: "Write a Python function that parses ISO dates.", headers: { "x-gearbox-route": "edge" } },
} as const;

type Outcome = { kind: string; mutation?: { setHeaders?: Record<string, string> } };
type Step = Outcome | Promise<Outcome>;
interface Processor {
  requestHeaders(h: Record<string, string>, eos: boolean): Outcome;
  requestBody(b: Buffer): Step;
  responseHeaders(h: Record<string, string>, eos: boolean): Step;
  responseBody(b: Buffer, eos: boolean): Step;
}
type Cycle = (mix: keyof typeof MIXES) => void;

/** One tree's processor, with deps in that tree's shape. */
async function load(root: string): Promise<Cycle> {
  const at = (p: string) => pathToFileURL(path.join(root, p)).href;
  const { parseConfigText, resolveConfig } = (await import(at("extproc/config/load.ts"))) as typeof ConfigLoad;
  const { RequestProcessor } = (await import(at("extproc/processor/processor.ts"))) as { RequestProcessor: new (deps: unknown) => Processor };
  const { silentLogger } = (await import(at("common/telemetry/logger.ts"))) as typeof Logging;
  const raw = parseConfigText(CONFIG, "bench.yaml");
  if (!raw.ok) throw new Error(raw.errors.join());
  const config = resolveConfig(raw.value, { K: "sk-bench" }, "bench.yaml");
  if (!config.ok) throw new Error(config.errors.join());
  let deps: unknown;
  try {
    const { Runtime } = (await import(at("extproc/runtime/runtime.ts"))) as typeof RuntimeModule;
    deps = { runtime: new Runtime(config.value), logger: silentLogger() };
  } catch {
    deps = { config: config.value, logger: silentLogger() };
  }
  const bodies = Object.fromEntries(
    Object.entries(MIXES).map(([name, m]) => [name, Buffer.from(JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: m.content }] }))]),
  );
  const completion = (model: string) =>
    Buffer.from(
      JSON.stringify({
        id: "c",
        object: "chat.completion",
        created: 1,
        model,
        choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
      }),
    );
  const cloudAnswer = completion("gpt-4o");
  const edgeAnswer = completion("qwen-small");
  return (mix) => {
    const p = new RequestProcessor(deps);
    p.requestHeaders({ ":method": "POST", ":path": "/v1/chat/completions", "content-type": "application/json", ...MIXES[mix].headers }, false);
    const out = p.requestBody(bodies[mix] ?? Buffer.alloc(0));
    if (out instanceof Promise) throw new Error("the bench's calls decide synchronously");
    const upstream = out.mutation?.setHeaders?.["x-gearbox-upstream"];
    if ((upstream === "edge") !== mix.startsWith("edge")) throw new Error(`${mix} went to ${upstream}`);
    const edge = upstream === "edge";
    const head = p.responseHeaders({ ":status": "200", "content-type": "application/json", ...(edge && { "x-gearbox-confidence": "0.9" }) }, false);
    if (head instanceof Promise) throw new Error("response headers are answered synchronously");
    const last = p.responseBody(edge ? edgeAnswer : cloudAnswer, true);
    if (last instanceof Promise) throw new Error("a confident edge answer and a cloud answer are decided synchronously");
  };
}

function time(cycle: Cycle, mix: keyof typeof MIXES, n: number): number {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) cycle(mix);
  return ((performance.now() - t0) * 1000) / n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function main(): Promise<void> {
  const trees: [string, Cycle][] = [["this tree", await load(path.resolve(import.meta.dirname, ".."))]];
  if (BASELINE) trees.push(["baseline", await load(path.resolve(BASELINE))]);
  const mixes = Object.keys(MIXES) as (keyof typeof MIXES)[];
  for (const [, cycle] of trees) for (const mix of mixes) time(cycle, mix, 2000); // warm-up (JIT)
  // Paired batches: each batch of this tree runs next to one of the baseline, in alternating
  // order, so a machine that slows down for a while slows both sides of a pair.
  const batches = Math.max(1, Math.round((ROUNDS * REQUESTS) / BATCH));
  console.log(`# decision path — ${new Date().toISOString()} — node ${process.version}, ${batches} paired batches × ${BATCH} requests per mix, medians\n`);
  console.log(`| mix | ${trees.map(([n]) => `${n} µs/request`).join(" | ")} |${BASELINE ? " change (median of paired batches) |" : ""}`);
  console.log(`|---|${trees.map(() => "---:").join("|")}|${BASELINE ? "---:|" : ""}`);
  for (const mix of mixes) {
    const us: number[][] = trees.map(() => []);
    const ratios: number[] = [];
    for (let b = 0; b < batches; b++) {
      const order = b % 2 === 0 ? [0, 1] : [1, 0];
      const pair: number[] = [];
      for (const i of order.slice(0, trees.length)) {
        const cycle = trees[i]?.[1];
        if (!cycle) continue;
        const t = time(cycle, mix, BATCH);
        pair[i] = t;
        us[i]?.push(t);
      }
      if (pair[0] !== undefined && pair[1] !== undefined) ratios.push(pair[0] / pair[1]);
    }
    const change = ratios.length > 0 ? ` ${fmtChange(median(ratios))} |` : "";
    console.log(`| ${mix} | ${us.map((u) => median(u).toFixed(1)).join(" | ")} |${change}`);
  }
}

function fmtChange(ratio: number): string {
  const pct = (ratio - 1) * 100;
  return `${pct >= 0 ? "+" : ""}${pct.toFixed(1)} %`;
}

await main();
