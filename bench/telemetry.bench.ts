/**
 * What telemetry costs on the ext_proc path, telemetry on vs off in the same run:
 *
 *   off        client → Envoy (harness) → Gearbox ext_proc, NO_TELEMETRY            → upstream
 *   log        … Gearbox ext_proc, the request-log line only (the default sink)     → upstream
 *   log+prom   … Gearbox ext_proc, log line + Prometheus (RequestTelemetry), /metrics scraped every second
 *
 * Each Gearbox, each Envoy and the upstream run in their own process; at each concurrency the
 * targets run in rotating order for several rounds and medians are kept. Then, in this process,
 * the sink alone: the same finished-request records through each sink, ns per request.
 *
 * Usage: node --import tsx bench/telemetry.bench.ts [--rounds 5 --scale 1]
 */
import { Writable } from "node:stream";
import { pino } from "pino";
import { startExtProcServer } from "../extproc/grpc/server.ts";
import type { CacheOutcome } from "../extproc/processor/cache-stage.ts";
import { requestRecord, type RequestRecord } from "../extproc/processor/request-record.ts";
import { createLogger } from "../common/telemetry/logger.ts";
import { GatewayMetrics } from "../extproc/telemetry/metrics.ts";
import { startMetricsServer } from "../extproc/telemetry/metrics-server.ts";
import { RequestTelemetry } from "../extproc/telemetry/request-telemetry.ts";
import { logOnly, NO_TELEMETRY, type Telemetry } from "../extproc/telemetry/telemetry.ts";
import { openAIProviderYaml, testConfig } from "../test/support/gateway.ts";
import { runLoad, type LoadResult } from "./load.ts";
import { median, numberArg, runBench, startRole } from "./processes.ts";
import { Runtime } from "../extproc/runtime/runtime.ts";

const VARIANTS = ["off", "log", "log+prom"] as const;
type Variant = (typeof VARIANTS)[number];

/** Child role: a Gearbox ext_proc server with the variant's telemetry. */
async function gearboxRole(variant: Variant, upstreamBase: string): Promise<Record<string, number>> {
  const config = testConfig(openAIProviderYaml(upstreamBase), { TEST_PROVIDER_KEY: "sk-bench" });
  // Like a deployment: info level, stdout (sent to /dev/null by the parent).
  const logger = createLogger("info");
  let telemetry: Telemetry = NO_TELEMETRY;
  let metricsPort = 0;
  if (variant === "log") telemetry = logOnly(logger);
  if (variant === "log+prom") {
    const metrics = new GatewayMetrics();
    telemetry = new RequestTelemetry(logger, metrics);
    metricsPort = (await startMetricsServer([metrics.registry], 0, "127.0.0.1")).port;
  }
  const extProc = await startExtProcServer({ runtime: new Runtime(config), logger, telemetry }, 0, "127.0.0.1");
  return { extProcPort: extProc.port, metricsPort };
}

const role = (script: string, name: string, ...args: string[]) => startRole(new URL(script, import.meta.url), name, ...args);

const NO_CACHE: CacheOutcome = { result: undefined, layer: undefined, similarity: undefined, hitCompletion: undefined };

/** The sink alone: `n` records (cloud, edge, cache, 429 in turn) through each sink, interleaved; ns per record. */
function sinkCost(n: number, rounds: number): Record<Variant, number> {
  const config = testConfig(openAIProviderYaml("http://127.0.0.1:1/v1"), { TEST_PROVIDER_KEY: "sk-bench" });
  const devNull = new Writable({ write: (_c, _e, done) => done() });
  const logger = pino({ level: "info", base: { component: "gearbox" }, timestamp: pino.stdTimeFunctions.isoTime }, devNull);
  const sinks: Record<Variant, Telemetry> = {
    off: NO_TELEMETRY,
    log: logOnly(logger),
    "log+prom": new RequestTelemetry(logger, new GatewayMetrics({}, { defaultMetrics: false })),
  };
  const base = {
    requestId: "r",
    traceId: undefined,
    transport: "ext_proc" as const,
    config,
    caller: undefined,
    endpoint: "chat_completions",
    parsed: undefined,
    decision: undefined,
    cascade: undefined,
    policy: undefined,
    edgeIntent: undefined,
    cache: NO_CACHE,
    status: 200,
    error: undefined,
    usage: { inputTokens: 40, outputTokens: 12, totalTokens: 52 },
    startedAt: 0,
    firstByteAt: undefined,
    now: 12.5,
    shadow: false,
  };
  const records: RequestRecord[] = [
    requestRecord(base),
    requestRecord({ ...base, cache: { ...NO_CACHE, result: "hit", layer: "exact", hitCompletion: '{"usage":{"prompt_tokens":40,"completion_tokens":12}}' } }),
    requestRecord({ ...base, status: 429 }),
  ];
  const out: Record<Variant, number[]> = { off: [], log: [], "log+prom": [] };
  for (let round = 0; round < rounds; round++) {
    for (const v of VARIANTS) {
      const sink = sinks[v];
      const started = process.hrtime.bigint();
      for (let i = 0; i < n; i++) sink.request(records[i % records.length] as RequestRecord, config);
      out[v].push(Number(process.hrtime.bigint() - started) / n);
    }
  }
  return { off: median(out.off), log: median(out.log), "log+prom": median(out["log+prom"]) };
}

async function main(): Promise<void> {
  const ROUNDS = numberArg("rounds", 5);
  const SCALE = numberArg("scale", 1);
  const plan = [
    { concurrency: 1, requests: Math.round(400 * SCALE) },
    { concurrency: 16, requests: Math.round(2000 * SCALE) },
  ];
  const upstream = await role("./roles.ts", "upstream");
  const origin = `http://127.0.0.1:${upstream.port}`;
  const gearboxes = await Promise.all(VARIANTS.map((v) => role("./telemetry.bench.ts", "gearbox", v, `${origin}/v1`)));
  const envoys = await Promise.all(gearboxes.map((g) => role("./roles.ts", "envoy", `127.0.0.1:${g.extProcPort}`, origin)));
  const targets = Object.fromEntries(VARIANTS.map((v, i) => [v, `http://127.0.0.1:${envoys[i]?.port}/v1/chat/completions`])) as Record<Variant, string>;
  const scrapeUrl = `http://127.0.0.1:${gearboxes[2]?.metricsPort}/metrics`;
  const scraper = setInterval(() => void fetch(scrapeUrl).then((r) => r.text()), 1000);
  const body = Buffer.from(
    JSON.stringify({
      model: "gpt-4.1-nano",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Invent a holiday and describe it." },
      ],
      temperature: 0.2,
    }),
  );
  for (const v of VARIANTS) await runLoad({ url: targets[v], body, concurrency: 8, requests: 300 }); // warm-up

  console.log(`# telemetry overhead on the ext_proc path — ${new Date().toISOString()} — node ${process.version}, ${ROUNDS} rounds, medians\n`);
  console.log("| concurrency | telemetry | req/s | p50 ms | p99 ms | vs off req/s | vs off p50 ms | errors |");
  console.log("|---:|---|---:|---:|---:|---:|---:|---:|");
  for (const { concurrency, requests } of plan) {
    const results: Record<Variant, LoadResult[]> = { off: [], log: [], "log+prom": [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < VARIANTS.length; i++) {
        const v = VARIANTS[(i + round) % VARIANTS.length] as Variant;
        results[v].push(await runLoad({ url: targets[v], body, concurrency, requests }));
      }
    }
    const agg = (v: Variant) => ({
      rps: median(results[v].map((r) => r.rps)),
      p50: median(results[v].map((r) => r.p50)),
      p99: median(results[v].map((r) => r.p99)),
      errors: results[v].reduce((a, r) => a + r.errors, 0),
    });
    const off = agg("off");
    for (const v of VARIANTS) {
      const a = agg(v);
      const vs = v === "off" ? ["—", "—"] : [`${((a.rps / off.rps - 1) * 100).toFixed(1)} %`, (a.p50 - off.p50).toFixed(3)];
      console.log(`| ${concurrency} | ${v} | ${a.rps.toFixed(0)} | ${a.p50.toFixed(2)} | ${a.p99.toFixed(2)} | ${vs[0]} | ${vs[1]} | ${a.errors} |`);
    }
  }
  clearInterval(scraper);
  const scraped = await (await fetch(scrapeUrl)).text();
  const counted = /gearbox_requests_total\{[^}]*status="200"[^}]*\} (\d+)/.exec(scraped)?.[1];
  const sink = sinkCost(200_000, ROUNDS);
  console.log(`\nlog+prom counted ${counted ?? "?"} requests in gearbox_requests_total (the metrics were live).`);
  console.log("\n| sink alone (in process, 200k records × rounds, median) | ns / request |");
  console.log("|---|---:|");
  for (const v of VARIANTS) console.log(`| ${v} | ${sink[v].toFixed(0)} |`);
}

const [roleName, ...roleArgs] = process.argv.slice(2);
if (roleName === "gearbox") {
  gearboxRole((roleArgs[0] ?? "off") as Variant, roleArgs[1] ?? "").then(
    (ready) => process.send?.({ ready }),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
} else {
  runBench(main);
}
