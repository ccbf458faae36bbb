/**
 * `gearbox report` over 1,000,000 request-log lines (npm run bench:report): writes a synthetic
 * log (a realistic mix of edge, cloud, upgraded, cache, 429 and 5xx lines over a week, pino's
 * shape, with other log lines between them) to a temp file, then runs the report in a child
 * process and prints its wall time and peak memory (max RSS). Goal: ≤ 60 s and ≤ 300 MB.
 */
import { spawnSync } from "node:child_process";
import { createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const LINES = Number(process.env.BENCH_REPORT_LINES ?? 1_000_000);

async function child(file: string, out: string): Promise<void> {
  const { runReport } = await import("../cli/report/main.ts");
  const started = performance.now();
  const code = await runReport([file, "--out", out], { out: () => undefined, err: (t) => process.stderr.write(t), env: process.env });
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(JSON.stringify({ code, seconds, maxRssMb: process.resourceUsage().maxRSS / 1024 }) + "\n");
}

async function writeLog(file: string): Promise<void> {
  const out = createWriteStream(file);
  const t0 = Date.parse("2025-06-01T00:00:00Z");
  const tenants = ["acme", "shop", "bank", "games", "news"];
  for (let i = 0; i < LINES; i++) {
    const k = i % 20;
    const base = `{"level":30,"time":"${new Date(t0 + i * 600).toISOString()}","component":"gearbox","request_id":"r${i}","transport":"ext_proc","tenant":"${tenants[i % 5]}","endpoint":"chat_completions","model":"${k % 4 === 0 ? "gpt-4o" : "gpt-4o-mini"}"`;
    const d = 20 + ((i * 7919) % 2000) / 10;
    const rest =
      k < 8
        ? `,"route":"edge","reason":"rule:1","cache":"miss","status":200,"input_tokens":40,"output_tokens":60,"cost_usd":0,"cloud_cost_avoided_usd":0.000042,"duration_ms":${d},"cascade":{"edge_model":"tiny","edge_agent":"a","edge_status":200,"edge_confidence":0.${70 + k},"edge_latency_ms":${d},"upgraded":false}`
        : k < 10
          ? `,"route":"cloud","reason":"upgrade:low_confidence:0.3<0.6;rule:1","cache":"miss","status":200,"input_tokens":40,"output_tokens":60,"cost_usd":0.000042,"duration_ms":${d * 3},"cascade":{"edge_model":"tiny","edge_agent":"a","edge_status":200,"edge_confidence":0.3,"edge_latency_ms":${d},"upgraded":true,"upgrade_reason":"low_confidence:0.3<0.6"}`
          : k < 16
            ? `,"route":"cloud","reason":"default_provider:openai","cache":"miss","status":200,"stream":true,"input_tokens":40,"output_tokens":60,"cost_usd":0.000042,"duration_ms":${d * 2},"ttft_ms":${d / 2}`
            : k < 18
              ? `,"route":"cache","cache":"hit","cache_layer":"${k === 16 ? "exact" : "semantic"}","status":200,"cost_usd":0,"cloud_cost_avoided_usd":0.000042,"duration_ms":2`
              : k === 18
                ? `,"cache":"miss","status":429,"error_code":"rate_limit_requests_per_second","duration_ms":1`
                : `,"cache":"miss","status":502,"error_code":"upstream_error","fallback":"openai:502>deepseek","duration_ms":${d}`;
    if (!out.write(`${base}${rest},"msg":"request"}\n`)) await new Promise<void>((r) => out.once("drain", () => r()));
    if (i % 50 === 0) out.write(`{"level":30,"time":"${new Date(t0 + i * 600).toISOString()}","component":"gearbox","msg":"ext_proc stream opened"}\n`);
  }
  await new Promise((r) => out.end(r));
}

async function main(): Promise<void> {
  if (process.argv[2] === "--child") return child(process.argv[3]!, process.argv[4]!);
  const dir = mkdtempSync(path.join(tmpdir(), "gearbox-bench-report-"));
  try {
    const file = path.join(dir, "requests.log");
    await writeLog(file);
    const run = spawnSync(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), "--child", file, path.join(dir, "report")], {
      encoding: "utf8",
    });
    if (run.status !== 0) throw new Error(`report failed: ${run.stderr}`);
    const r = JSON.parse(run.stdout.trim().split("\n").pop()!) as { seconds: number; maxRssMb: number };
    console.log(
      `gearbox report over ${LINES.toLocaleString("en")} request-log lines: ${r.seconds.toFixed(1)} s wall, peak RSS ${r.maxRssMb.toFixed(0)} MB (goal ≤ 60 s, ≤ 300 MB)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
