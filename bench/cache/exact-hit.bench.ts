/**
 * Exact-cache hits end to end through the Envoy harness, against the same path without a hit,
 * each server in its own process, all in one run:
 *
 *   envoy+noop      client → Envoy (harness) → no-op ext_proc   → upstream emulator  (baseline)
 *   gearbox miss    client → Envoy (harness) → Gearbox ext_proc → upstream emulator  (not cacheable: temperature 0.2)
 *   gearbox hit     client → Envoy (harness) → Gearbox ext_proc → immediate response (identical temperature-0 request)
 *
 * The emulator answers at once, so "miss" is Gearbox's own cost plus a free upstream; a real
 * provider adds 0.3–5 s that a hit saves. Targets run in rotating order; medians are kept.
 * Usage: node --import tsx bench/cache/exact-hit.bench.ts [--rounds 3 --scale 1]
 */
import { runLoad, type LoadResult } from "../load.ts";
import { median, numberArg, runBench, startRole } from "../processes.ts";

const ROUNDS = numberArg("rounds", 3);
const SCALE = numberArg("scale", 1);
const PLAN = [
  { concurrency: 1, requests: Math.round(400 * SCALE) },
  { concurrency: 16, requests: Math.round(2000 * SCALE) },
];

const role = (name: string, ...args: string[]) => startRole(new URL("../roles.ts", import.meta.url), name, ...args);

async function main(): Promise<void> {
  const upstream = await role("upstream");
  const origin = `http://127.0.0.1:${upstream.port}`;
  const [gearbox, noop] = await Promise.all([role("gearbox", `${origin}/v1`, "cache: { exact: { enable: true } }"), role("noop")]);
  const [envoyNoop, envoyGearbox] = await Promise.all([role("envoy", String(noop.address), origin), role("envoy", `127.0.0.1:${gearbox.extProcPort}`, origin)]);
  const path = "/v1/chat/completions";
  const request = (temperature: number) =>
    Buffer.from(
      JSON.stringify({
        model: "gpt-4.1-nano",
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Invent a holiday and describe it." },
        ],
        temperature,
      }),
    );
  const targets: Record<string, { url: string; body: Buffer }> = {
    "envoy+noop": { url: `http://127.0.0.1:${envoyNoop.port}${path}`, body: request(0.2) },
    "gearbox miss": { url: `http://127.0.0.1:${envoyGearbox.port}${path}`, body: request(0.2) },
    "gearbox hit": { url: `http://127.0.0.1:${envoyGearbox.port}${path}`, body: request(0) },
  };
  const names = Object.keys(targets);
  // Warm-up: JIT, connections, and the one miss that fills the cache for the hit target.
  for (const name of names) await runLoad({ ...(targets[name] ?? { url: "", body: Buffer.alloc(0) }), concurrency: 4, requests: 200 });

  // Each target does what its name says: the route Gearbox reports for it.
  for (const name of names) {
    const target = targets[name];
    const res = await fetch(target?.url ?? "", { method: "POST", headers: { "content-type": "application/json" }, body: target?.body ?? null });
    await res.arrayBuffer();
    const route = res.headers.get("x-gearbox-route") ?? "(none)";
    const expected = { "envoy+noop": "(none)", "gearbox miss": "cloud", "gearbox hit": "cache" }[name];
    if (route !== expected) throw new Error(`${name}: x-gearbox-route ${route}, expected ${expected ?? "?"}`);
  }
  console.log(`# exact-cache hit benchmark — ${new Date().toISOString()} — node ${process.version}, ${ROUNDS} rounds, medians\n`);
  console.log("| concurrency | target | req/s | p50 ms | p99 ms | errors |");
  console.log("|---:|---|---:|---:|---:|---:|");
  const summary: string[] = [];
  for (const { concurrency, requests } of PLAN) {
    const results: Record<string, LoadResult[]> = Object.fromEntries(names.map((n) => [n, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of names.map((_, i) => names[(i + round) % names.length] ?? "")) {
        const target = targets[name];
        if (target) results[name]?.push(await runLoad({ ...target, concurrency, requests }));
      }
    }
    const agg = (name: string) => {
      const rs = results[name] ?? [];
      return {
        rps: median(rs.map((r) => r.rps)),
        p50: median(rs.map((r) => r.p50)),
        p99: median(rs.map((r) => r.p99)),
        errors: rs.reduce((a, r) => a + r.errors, 0),
      };
    };
    for (const name of names) {
      const a = agg(name);
      console.log(`| ${concurrency} | ${name} | ${a.rps.toFixed(0)} | ${a.p50.toFixed(2)} | ${a.p99.toFixed(2)} | ${a.errors} |`);
    }
    const [base, miss, hit] = [agg("envoy+noop"), agg("gearbox miss"), agg("gearbox hit")];
    summary.push(`| ${concurrency} | ${(hit.p50 / base.p50).toFixed(2)} | ${(hit.p50 / miss.p50).toFixed(2)} | ${(hit.rps / miss.rps).toFixed(2)} |`);
  }
  console.log("\n| concurrency | hit p50 / no-op path p50 | hit p50 / miss p50 | hit req/s / miss req/s |");
  console.log("|---:|---:|---:|---:|");
  for (const line of summary) console.log(line);
}

runBench(main);
