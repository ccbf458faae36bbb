/**
 * Full request cycles, each server in its own process, all in one run so ratios are fair:
 *
 *   direct       client → upstream emulator
 *   envoy+noop   client → Envoy (harness) → no-op ext_proc       → upstream   (baseline)
 *   envoy+gbx    client → Envoy (harness) → Gearbox ext_proc     → upstream
 *   front door   client → Gearbox front door                     → upstream
 *
 * At each concurrency the targets run in rotating order for several rounds; medians are kept.
 * Usage: npm run bench [-- --rounds 3 --scale 1]
 */
import { runLoad, type LoadResult } from "./load.ts";
import { median, numberArg, runBench, startRole } from "./processes.ts";

const ROUNDS = numberArg("rounds", 3);
const SCALE = numberArg("scale", 1);
const PLAN = [
  { concurrency: 1, requests: Math.round(400 * SCALE) },
  { concurrency: 16, requests: Math.round(2000 * SCALE) },
  { concurrency: 64, requests: Math.round(3000 * SCALE) },
];

const role = (name: string, ...args: string[]) => startRole(new URL("./roles.ts", import.meta.url), name, ...args);

async function main(): Promise<void> {
  const upstream = await role("upstream");
  const upstreamOrigin = `http://127.0.0.1:${upstream.port}`;
  const [gearbox, noop] = await Promise.all([role("gearbox", `${upstreamOrigin}/v1`), role("noop")]);
  const [envoyNoop, envoyGearbox] = await Promise.all([
    role("envoy", String(noop.address), upstreamOrigin),
    role("envoy", `127.0.0.1:${gearbox.extProcPort}`, upstreamOrigin),
  ]);
  const path = "/v1/chat/completions";
  const targets: Record<string, string> = {
    direct: `${upstreamOrigin}${path}`,
    "envoy+noop": `http://127.0.0.1:${envoyNoop.port}${path}`,
    "envoy+gearbox": `http://127.0.0.1:${envoyGearbox.port}${path}`,
    "front door": `http://127.0.0.1:${gearbox.httpPort}${path}`,
  };
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
  const names = Object.keys(targets);
  for (const name of names) await runLoad({ url: targets[name] ?? "", body, concurrency: 8, requests: 300 }); // warm-up (JIT, connections)

  console.log(`# ext_proc benchmark — ${new Date().toISOString()} — node ${process.version}, ${ROUNDS} rounds, medians\n`);
  console.log("| concurrency | target | req/s | p50 ms | p99 ms | added p50 ms | added p99 ms | errors |");
  console.log("|---:|---|---:|---:|---:|---:|---:|---:|");
  const summary: string[] = [];
  for (const { concurrency, requests } of PLAN) {
    const results: Record<string, LoadResult[]> = Object.fromEntries(names.map((n) => [n, []]));
    for (let round = 0; round < ROUNDS; round++) {
      const order = names.map((_, i) => names[(i + round) % names.length] ?? "");
      for (const name of order) results[name]?.push(await runLoad({ url: targets[name] ?? "", body, concurrency, requests }));
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
    const direct = agg("direct");
    for (const name of names) {
      const a = agg(name);
      const added = name === "direct" ? ["—", "—"] : [(a.p50 - direct.p50).toFixed(2), (a.p99 - direct.p99).toFixed(2)];
      console.log(`| ${concurrency} | ${name} | ${a.rps.toFixed(0)} | ${a.p50.toFixed(2)} | ${a.p99.toFixed(2)} | ${added[0]} | ${added[1]} | ${a.errors} |`);
    }
    const noopAgg = agg("envoy+noop");
    const gbx = agg("envoy+gearbox");
    const fd = agg("front door");
    summary.push(
      `| ${concurrency} | ${((gbx.rps / noopAgg.rps) * 100).toFixed(0)} % | ${(gbx.p50 - noopAgg.p50).toFixed(2)} | ${(gbx.p99 - noopAgg.p99).toFixed(2)} | ${((fd.rps / direct.rps) * 100).toFixed(0)} % | ${(fd.p50 - direct.p50).toFixed(2)} |`,
    );
  }
  console.log(
    "\n| concurrency | Gearbox / no-op req/s | Gearbox − no-op p50 ms | Gearbox − no-op p99 ms | front door / direct req/s | front door − direct p50 ms |",
  );
  console.log("|---:|---:|---:|---:|---:|---:|");
  for (const line of summary) console.log(line);
}

runBench(main);
