/**
 * The Governor's cost per call: `admit` + `settle` of one cloud call whose tenant and key both
 * carry limits (runaway, concurrency, requests/s ×2, tokens/min ×2, daily cost: 7 checks, one
 * store round trip each way), in one run:
 *
 *   memory           the in-process store (the embedded default)
 *   redis            the Redis store alone (one ioredis connection, 5 s command timeout)
 *   redis+failover   as production runs it: the failover wrapper, 50 ms command timeout; a
 *                    command past it is decided locally (counted in the `local` column, and
 *                    later calls too until the 1 s probe finds Redis answering)
 *
 * each sequentially (one call at a time: latency) and with 16 and 64 calls in flight
 * (auto-pipelined on the one connection: throughput). Calls spread over 100 tenants, every request distinct (the
 * runaway check counts but never refuses). Latency is from `admit` to `settle` resolved.
 *
 * `node --import tsx bench/limiter.bench.ts [scale=1]` (REDIS_URL, default the local server)
 */
import { availableParallelism, loadavg } from "node:os";
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Governor, type AdmitRequest } from "../extproc/governance/governor.ts";
import type { Caller } from "../extproc/governance/model.ts";
import { FailoverLimiter } from "../extproc/store/failover-limiter.ts";
import type { LimiterStore } from "../extproc/store/limiter.ts";
import { MemoryLimiter } from "../extproc/store/memory-limiter.ts";
import { connectRedis, redisReady } from "../extproc/store/redis.ts";
import { RedisLimiter } from "../extproc/store/redis-limiter.ts";
import { silentLogger } from "../common/telemetry/logger.ts";

const SCALE = Number(process.argv[2] ?? 1);
const TENANTS = 100;
const RUNAWAY = { enable: true, window_ms: 10_000, max_identical: 3 };
const LIMITS = { requests_per_second: 1e6, tokens_per_minute: 1e12, max_concurrent: 10_000, daily_cost_usd: 1e6 };

const callers: Caller[] = Array.from({ length: TENANTS }, (_, i) => ({
  tenant: { id: `bench${i}`, limits: LIMITS, degrade_to_edge: false, source: "config" },
  key: {
    id: `key_${i}`,
    role: "call",
    name: "bench",
    prefix: "gbx_call_Bnch",
    hash: "",
    created_at: "",
    created_by: "",
    limits: { requests_per_second: 1e6, tokens_per_minute: 1e12 },
  },
  via: "key",
}));

/** Every request distinct across runs, so the runaway check counts but never refuses. */
let requestSerial = 0;

interface Result {
  calls: number;
  perSecond: number;
  p50: number;
  p99: number;
  refused: number;
  /** This process's CPU time over wall time (1 = one core busy). */
  clientCpu: number;
}

async function run(store: LimiterStore, calls: number, inFlight: number): Promise<Result> {
  const governor = new Governor({ store, runaway: RUNAWAY, logger: silentLogger() });
  const latencies = new Float64Array(calls);
  let next = 0;
  let refused = 0;
  const worker = async () => {
    while (next < calls) {
      const i = next++;
      const request: AdmitRequest = {
        caller: callers[i % TENANTS] as Caller,
        model: "gpt-4.1",
        estimate: { inputTokens: 800, maxOutputTokens: 512, costUsd: 0.0057 },
        fingerprint: String(requestSerial++),
        target: "cloud",
      };
      const started = performance.now();
      const decision = await governor.admit(request);
      if (decision.ok) await decision.ticket.settle({ inputTokens: 790, outputTokens: 120, costUsd: 0.0025 });
      else refused++;
      latencies[i] = performance.now() - started;
    }
  };
  const started = performance.now();
  const cpu = process.cpuUsage();
  await Promise.all(Array.from({ length: inFlight }, worker));
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  governor.close();
  latencies.sort();
  const at = (q: number) => latencies[Math.min(calls - 1, Math.floor(q * calls))] ?? NaN;
  return { calls, perSecond: calls / seconds, p50: at(0.5), p99: at(0.99), refused, clientCpu: (used.user + used.system) / 1e6 / seconds };
}

async function main(): Promise<void> {
  const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const redis = connectRedis(url, { name: "gearbox-bench", commandTimeoutMs: 5_000 });
  const production = connectRedis(url, { name: "gearbox-bench-50ms" });
  await Promise.all([redisReady(redis), redisReady(production)]);
  const prefix = `gbxbench:${randomBytes(4).toString("hex")}:`;
  const failover = new FailoverLimiter(new RedisLimiter(production, { prefix }), new MemoryLimiter(), silentLogger());
  const stores: [string, LimiterStore][] = [
    ["memory", new MemoryLimiter()],
    ["redis", new RedisLimiter(redis, { prefix })],
    ["redis+failover", failover],
  ];
  const plan = (name: string, inFlight: number) => Math.round((name === "memory" ? 100_000 : inFlight === 1 ? 5_000 : 30_000) * SCALE);

  console.log(
    `# limiter benchmark: ${new Date().toISOString()}, node ${process.version}, Redis ${(await redis.info("server")).match(/redis_version:(\S+)/)?.[1] ?? "?"} at ${url}`,
  );
  console.log(
    `${availableParallelism()} CPUs, load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}; admit + settle, 7 checks per call, ${TENANTS} tenants\n`,
  );
  console.log("| store | in flight | calls | calls/s | p50 µs | p99 µs | client CPU | local |");
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|");
  for (const [name, store] of stores) {
    for (const inFlight of [1, 16, 64]) {
      await run(store, Math.round(plan(name, inFlight) / 10), inFlight); // warm-up: JIT, script cache
      while (!failover.stats.redisHealthy) await sleep(100); // each run starts on Redis
      const localBefore = failover.stats.fallbackDecisions;
      const r = await run(store, plan(name, inFlight), inFlight);
      if (r.refused > 0) throw new Error(`${name}: ${r.refused} calls refused; the bench measures admissions`);
      const local = store === failover ? String(failover.stats.fallbackDecisions - localBefore) : "—";
      console.log(
        `| ${name} | ${inFlight} | ${r.calls} | ${Math.round(r.perSecond).toLocaleString("en-US")} | ${Math.round(r.p50 * 1000)} | ${Math.round(r.p99 * 1000)} | ${Math.round(r.clientCpu * 100)} % | ${local} |`,
      );
    }
  }
  failover.close();
  let cursor = "0";
  do {
    const [nextCursor, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = nextCursor;
  } while (cursor !== "0");
  await Promise.all([redis.quit(), production.quit()]);
}

await main();
