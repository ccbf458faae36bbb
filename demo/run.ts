/**
 * `gearbox demo` / `npm run demo`: one command, no key, no network. Writes the tiny GGUF model,
 * starts the cloud stand-in, then the real `gearbox serve` (a child process, all ports free ones
 * on 127.0.0.1) with an in-process edge agent on the tiny model, exact and semantic caches, a
 * routing policy, the confidence cascade and a rate-limited `trial` tenant; sends the script
 * through the front door and prints a row per request (from the response and the gateway's own
 * request log) and the totals. Everything but the cloud is Gearbox's real code.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { freePort } from "../common/net/free-port.ts";
import { writeTinyGguf } from "../edge-agent/model/tiny-gguf.ts";
import { writeReport } from "../cli/report/main.ts";
import { startCloudStandIn } from "./cloud-stand-in.ts";
import { DEMO_SCRIPT, type DemoStep } from "./script.ts";
import { headerLine, printable, rowLine, rowOf, totalsLines, totalsOf, type DemoRow, type DemoTotals, type LoggedRequest } from "./table.ts";

const GEARBOX = fileURLToPath(new URL("../bin/gearbox.mjs", import.meta.url));
/** The edge answers below this confidence are upgraded (the tiny model scores about 0.14–0.22). */
const CONFIDENCE_THRESHOLD = 0.15;
const START_TIMEOUT_MS = 45_000;

export interface DemoOptions {
  script?: readonly DemoStep[];
  /** Where the lines go (default stdout). */
  out?: (line: string) => void;
  /** Print the gateway's start-up report too (default true). */
  banner?: boolean;
  /** Where the demo writes its request log and `gearbox report` of it (default: a new folder under the system's temp dir). */
  reportDir?: string;
}

export interface DemoResult {
  rows: DemoRow[];
  totals: DemoTotals;
  /** The gateway's request log lines for the script's requests, in order. */
  log: LoggedRequest[];
  /** Chat calls the cloud stand-in answered. */
  cloudCalls: number;
  /** The request log and the report written from it. */
  report: { log: string; html: string; markdown: string; json: string };
}

function configYaml(ports: Record<"extproc" | "http" | "admin" | "metrics" | "xds", number>, model: string, cloudBaseUrl: string): string {
  return `# Written by gearbox demo.
listen: { host: 127.0.0.1, extproc_port: ${ports.extproc}, http_port: ${ports.http}, admin_port: ${ports.admin}, metrics_port: ${ports.metrics}, xds_port: ${ports.xds} }
logging: { level: info }
providers:
  - { name: openai, kind: openai, base_url: '${cloudBaseUrl}', api_key_env: GEARBOX_DEMO_CLOUD_KEY, default: true }
edge:
  local: { model: '${model}', port: 0, threads: 1, context_length: 1024 }
  default_model: tiny
  fallback_model: gpt-4o-mini
route:
  rules:
    - when: { intent: [summarize, intent_classify, extract_entity], estimated_complexity: low }
      target: edge
    - when: { intent: [code_gen, multi_hop_reasoning, math] }
      target: cloud
  fallback: { enable: true, confidence_threshold: ${CONFIDENCE_THRESHOLD}, upgrade_target: cloud }
cache:
  exact: { enable: true }
  semantic: { enable: true, threshold: 0.85 }
tenants:
  - { id: default }
  - { id: trial, limits: { requests_per_second: 1 } }
auth: { required: false, anonymous_tenant: default }
`;
}

/** The child's environment: the caller's, without anything that would move a port, a key or the state. */
function childEnv(configFile: string, adminKey: string, cloudKey: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!/^(GEARBOX_|OPENAI_|REDIS_URL$|OTEL_)/.test(name)) env[name] = value;
  return { ...env, GEARBOX_CONFIG: configFile, GEARBOX_ADMIN_KEY: adminKey, GEARBOX_DEMO_CLOUD_KEY: cloudKey };
}

interface Gateway {
  child: ChildProcess;
  logs: Map<string, LoggedRequest>;
  /** Every JSON line the gateway wrote, as written (what `gearbox report` reads). */
  lines: string[];
  banner: string[];
  stderr: string[];
}

function startGateway(env: NodeJS.ProcessEnv): Gateway {
  const child = spawn(process.execPath, [GEARBOX, "serve"], { env, stdio: ["ignore", "pipe", "pipe"] });
  const gateway: Gateway = { child, logs: new Map(), lines: [], banner: [], stderr: [] };
  createInterface({ input: child.stdout }).on("line", (line) => {
    if (!line.startsWith("{")) return void gateway.banner.push(line);
    gateway.lines.push(line);
    try {
      const entry = JSON.parse(line) as LoggedRequest & { msg?: string };
      if (entry.msg === "request") gateway.logs.set(entry.request_id, entry);
    } catch {
      gateway.banner.push(line);
    }
  });
  createInterface({ input: child.stderr }).on("line", (line) => gateway.stderr.push(line));
  return gateway;
}

async function waitReady(gateway: Gateway, url: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (gateway.child.exitCode !== null) throw new Error(`gearbox serve exited (${gateway.child.exitCode}): ${gateway.stderr.slice(-5).join(" | ")}`);
    const up = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return;
    await sleep(100);
  }
  throw new Error(`gearbox serve did not answer ${url}/healthz within ${START_TIMEOUT_MS / 1000} s`);
}

async function createTrialKey(adminUrl: string, adminKey: string): Promise<string> {
  const res = await fetch(`${adminUrl}/v1/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
    body: JSON.stringify({ role: "call", tenant: "trial", name: "demo trial key" }),
  });
  const body = (await res.json()) as { key?: string };
  if (!res.ok || typeof body.key !== "string") throw new Error(`creating the trial tenant's key: HTTP ${res.status}`);
  return body.key;
}

async function logLineOf(gateway: Gateway, requestId: string): Promise<LoggedRequest> {
  for (let i = 0; i < 100; i++) {
    const line = gateway.logs.get(requestId);
    if (line) return line;
    await sleep(20);
  }
  throw new Error(`no request log line for ${requestId}`);
}

/** Writes the gateway's log lines to `dir/gearbox.log` and `gearbox report` of it into `dir`. */
async function reportOn(lines: readonly string[], dir: string): Promise<DemoResult["report"]> {
  await mkdir(dir, { recursive: true });
  const log = path.join(dir, "gearbox.log");
  await writeFile(log, lines.map((l) => `${l}\n`).join(""));
  const written = await writeReport({ files: [log], out: dir, filters: {} });
  return { log, html: written.html, markdown: written.markdown, json: written.json };
}

export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const out = options.out ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const script = options.script ?? DEMO_SCRIPT;
  const dir = await mkdtemp(path.join(tmpdir(), "gearbox-demo-"));
  const cloudKey = `sk-demo-${randomBytes(12).toString("hex")}`;
  const adminKey = randomBytes(32).toString("base64url");
  const cloud = await startCloudStandIn(cloudKey);
  let gateway: Gateway | undefined;
  try {
    const model = path.join(dir, "tiny.gguf");
    await writeTinyGguf(model);
    const ports = { extproc: await freePort(), http: await freePort(), admin: await freePort(), metrics: await freePort(), xds: await freePort() };
    const configFile = path.join(dir, "gearbox.yaml");
    await writeFile(configFile, configYaml(ports, model, cloud.baseUrl));
    out("gearbox demo: the real gateway (gearbox serve: control plane, ext_proc, front door, caches, limits)");
    out(`  edge   an in-process edge agent running llama.cpp on a generated tiny model (${model}):`);
    out("         its weights are random, so its answers are random bytes and its confidence is low");
    out(`  cloud  a local STAND-IN that answers like OpenAI (${cloud.baseUrl}): canned text, no real model, no network`);
    out("");
    gateway = startGateway(childEnv(configFile, adminKey, cloudKey));
    const url = `http://127.0.0.1:${ports.http}`;
    await waitReady(gateway, url);
    if (options.banner !== false) for (const line of gateway.banner) out(line);
    const trialKey = await createTrialKey(`http://127.0.0.1:${ports.admin}`, adminKey);
    out("");
    out(headerLine());
    const rows: DemoRow[] = [];
    const log: LoggedRequest[] = [];
    for (const [i, step] of script.entries()) {
      const headers: Record<string, string> = {
        "content-type": "application/json",
        ...(step.route && { "x-gearbox-route": step.route }),
        ...(step.trialTenant && { authorization: `Bearer ${trialKey}` }),
      };
      const body = { model: step.model ?? "gpt-4o-mini", messages: [{ role: "user", content: step.prompt }], max_tokens: step.maxTokens ?? 16, temperature: 0 };
      const started = performance.now();
      const res = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers, body: JSON.stringify(body) });
      const answer = (await res.json()) as { choices?: { message?: { content?: string } }[]; error?: { code?: string } };
      const latencyMs = performance.now() - started;
      const requestId = res.headers.get("x-gearbox-request-id");
      if (requestId === null) throw new Error(`step ${i + 1} (${step.label}): no x-gearbox-request-id`);
      const line = await logLineOf(gateway, requestId);
      log.push(line);
      const text = answer.choices?.[0]?.message?.content ?? answer.error?.code ?? "";
      const row = rowOf(i + 1, step.label, line, { status: res.status, latencyMs, answer: printable(text) });
      rows.push(row);
      out(rowLine(row));
    }
    const totals = totalsOf(rows);
    out("");
    for (const line of totalsLines(totals)) out(line);
    out("(cloud costs are list prices of gpt-4o-mini for the stand-in's token counts; the edge is free)");
    const report = await reportOn(gateway.lines, options.reportDir ?? (await mkdtemp(path.join(tmpdir(), "gearbox-demo-report-"))));
    out("");
    out("gearbox report on this run's request log (the same command works on any Gearbox log):");
    out(`  log      ${report.log}`);
    out(`  html     ${report.html}`);
    out(`  summary  ${report.markdown}`);
    out(`  json     ${report.json}`);
    return { rows, totals, log, cloudCalls: cloud.calls, report };
  } finally {
    if (gateway && gateway.child.exitCode === null) {
      gateway.child.kill("SIGTERM");
      await Promise.race([once(gateway.child, "exit"), sleep(5_000)]);
      if (gateway.child.exitCode === null) gateway.child.kill("SIGKILL");
    }
    await cloud.close();
    await rm(dir, { recursive: true, force: true });
  }
}
