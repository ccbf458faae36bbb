/**
 * `gearbox replay <traffic file>`: reads the file as a stream, sends each request to the target
 * at the chosen pace, and appends one result line per request to the output as it completes.
 * A stop (SIGINT, or the end of `--limit`) sends nothing new, waits for what is in flight and
 * keeps every finished line; `--resume` skips the lines already in the output.
 */
import { createWriteStream, type WriteStream } from "node:fs";
import { stat } from "node:fs/promises";
import type { CliIo } from "../admin-client.ts";
import { fileProblem, parseOrExit, parseVerbArgs, UsageProblem } from "../file-verbs.ts";
import { fileLines } from "../report/lines.ts";
import { extProcTarget } from "./extproc-target.ts";
import { httpTarget } from "./http-target.ts";
import { parseTrafficLine, type InputFormat, type ReplayRequest } from "./input.ts";
import { Pacer, type Pace } from "./pace.ts";
import { progress, type Progress } from "./progress.ts";
import { replayResult } from "./result.ts";
import type { Target } from "./target.ts";
import { REPLAY_USAGE } from "./usage.ts";

export interface ReplayOptions {
  file: string;
  out: string;
  target: { kind: "front_door"; url: string } | { kind: "ext_proc"; address: string; clusters: Record<string, string>; upstream: string | undefined };
  pace: Pace;
  concurrency: number;
  limit: number | undefined;
  resume: boolean;
  shadow: boolean;
  format: InputFormat;
  model: string;
  keys: { default: string | undefined; byTenant: Map<string, string> };
  timeoutMs: number;
}

export interface ReplaySummary {
  sent: number;
  failed: number;
  malformed: number;
  alreadyDone: number;
  stopped: boolean;
}

function positive(name: string, value: string | undefined, integer: boolean): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
    throw new UsageProblem(`--${name} '${value}' is not a positive ${integer ? "integer" : "number"}`);
  return n;
}

function url(name: string, value: string): string {
  try {
    const u = new URL(value);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error();
    return value;
  } catch {
    throw new UsageProblem(`${name} '${value}' is not an http(s) URL`);
  }
}

export function parseReplayArgs(args: string[]): ReplayOptions {
  const parsed = parseVerbArgs(args, {
    target: { type: "string" },
    out: { type: "string" },
    resume: { type: "boolean" },
    limit: { type: "string" },
    concurrency: { type: "string" },
    rate: { type: "string" },
    timing: { type: "boolean" },
    speed: { type: "string" },
    shadow: { type: "boolean" },
    format: { type: "string" },
    model: { type: "string" },
    key: { type: "string", multiple: true },
    cluster: { type: "string", multiple: true },
    upstream: { type: "string" },
    timeout: { type: "string" },
  });
  const { values: v, positionals } = parsed;
  if (positionals.length === 0) throw new UsageProblem("no traffic file given");
  if (positionals.length > 1) throw new UsageProblem(`one traffic file at a time (got ${positionals.length})`);
  if (!v.target) throw new UsageProblem("--target is required (http://host:port for the front door, grpc://host:port for ext_proc)");
  let target: ReplayOptions["target"];
  if (/^https?:\/\//.test(v.target)) {
    target = { kind: "front_door", url: url("--target", v.target) };
    if (v.cluster || v.upstream) throw new UsageProblem("--cluster and --upstream are for an ext_proc target (grpc://host:port)");
    if (v.shadow) throw new UsageProblem("--shadow needs an ext_proc target: the front door is the destination itself, so Gearbox never shadows it");
  } else {
    const address = v.target.replace(/^grpc:\/\//, "");
    if (!/^[^\s/:]+:\d{1,5}$/.test(address)) throw new UsageProblem(`--target '${v.target}' is neither an http(s) URL nor grpc://host:port`);
    const clusters: Record<string, string> = {};
    for (const c of v.cluster ?? []) {
      const eq = c.indexOf("=");
      if (eq <= 0) throw new UsageProblem(`--cluster '${c}' is not <name>=<url>`);
      clusters[c.slice(0, eq)] = url(`--cluster ${c.slice(0, eq)}`, c.slice(eq + 1));
    }
    target = { kind: "ext_proc", address, clusters, upstream: v.upstream === undefined ? undefined : url("--upstream", v.upstream) };
  }
  const paces = [v.rate !== undefined, v.timing === true].filter(Boolean).length;
  if (paces > 1) throw new UsageProblem("choose one pace: --rate or --timing");
  if (v.speed !== undefined && !v.timing) throw new UsageProblem("--speed goes with --timing");
  const rate = positive("rate", v.rate, false);
  const pace: Pace =
    rate !== undefined
      ? { kind: "rate", perSecond: rate }
      : v.timing
        ? { kind: "timing", speed: positive("speed", v.speed, false) ?? 1 }
        : { kind: "concurrency" };
  const format = v.format ?? "openai";
  if (format !== "openai" && format !== "anthropic") throw new UsageProblem(`--format '${format}' is not openai or anthropic`);
  const keys: ReplayOptions["keys"] = { default: undefined, byTenant: new Map() };
  for (const k of v.key ?? []) {
    const eq = k.indexOf("=");
    if (eq > 0) keys.byTenant.set(k.slice(0, eq), k.slice(eq + 1));
    else keys.default = k;
  }
  const file = positionals[0]!;
  return {
    file,
    out: v.out ?? `${file}.replay.jsonl`,
    target,
    pace,
    concurrency: positive("concurrency", v.concurrency, true) ?? 8,
    limit: positive("limit", v.limit, true),
    resume: v.resume === true,
    shadow: v.shadow === true,
    format,
    model: v.model ?? "gpt-4o-mini",
    keys,
    timeoutMs: positive("timeout", v.timeout, true) ?? 120_000,
  };
}

/** Line numbers already in an output file, and whether its last line is cut (a killed run). */
async function doneLines(out: string): Promise<{ done: Set<number>; endsCut: boolean }> {
  const done = new Set<number>();
  let last = "";
  for await (const line of fileLines(out)) {
    last = line;
    try {
      const n = (JSON.parse(line) as { replay_line?: unknown }).replay_line;
      if (typeof n === "number") done.add(n);
    } catch {
      // a cut line: that request is sent again
    }
  }
  let endsCut = false;
  if (last !== "") {
    try {
      JSON.parse(last);
    } catch {
      endsCut = true;
    }
  }
  return { done, endsCut };
}

function headersFor(request: ReplayRequest, options: ReplayOptions): Record<string, string> {
  const key = (request.tenant !== undefined ? options.keys.byTenant.get(request.tenant) : undefined) ?? options.keys.default;
  return {
    "content-type": "application/json",
    ...(key !== undefined && { authorization: `Bearer ${key}` }),
    ...(request.path === "/v1/messages" && { "anthropic-version": "2023-06-01" }),
    ...request.headers,
  };
}

export interface ReplayHooks {
  /** Where notes and progress go (default stderr). */
  stderr?: NodeJS.WriteStream;
  /** Set to true to stop (what SIGINT does). */
  stopSignal?: { stopped: boolean };
}

export async function replay(options: ReplayOptions, hooks: ReplayHooks = {}): Promise<ReplaySummary> {
  const stderr = hooks.stderr ?? process.stderr;
  const stop = hooks.stopSignal ?? { stopped: false };
  const existing = options.resume
    ? await doneLines(options.out).catch(() => ({ done: new Set<number>(), endsCut: false }))
    : { done: new Set<number>(), endsCut: false };
  // Total for the ETA: a quick first pass over the file (it is streamed again to send).
  let lines = 0;
  for await (const _ of fileLines(options.file)) lines++;
  const todo = Math.max(0, lines - existing.done.size);
  const total = options.limit === undefined ? todo : Math.min(options.limit, todo);
  const target: Target =
    options.target.kind === "front_door"
      ? httpTarget(options.target.url, { sockets: options.concurrency, timeoutMs: options.timeoutMs })
      : extProcTarget({ ...options.target, timeoutMs: options.timeoutMs, sockets: options.concurrency });
  const output: WriteStream = createWriteStream(options.out, { flags: options.resume ? "a" : "w" });
  if (existing.endsCut) output.write("\n");
  const bar: Progress = progress(total, stderr);
  const pacer = new Pacer(options.pace, options.concurrency);
  const summary: ReplaySummary = { sent: 0, failed: 0, malformed: 0, alreadyDone: 0, stopped: false };
  const inFlight = new Set<Promise<void>>();
  let n = 0;
  try {
    for await (const text of fileLines(options.file)) {
      n++;
      if (stop.stopped) break;
      if (existing.done.has(n)) {
        summary.alreadyDone++;
        continue;
      }
      if (text.trim() === "") continue;
      const parsed = parseTrafficLine(text, n, options.format, options.model);
      if (!parsed.ok) {
        summary.malformed++;
        bar.note(`gearbox replay: line ${parsed.line}: ${parsed.reason} (skipped)`);
        continue;
      }
      if (options.limit !== undefined && summary.sent >= options.limit) break;
      await pacer.turn(parsed.value.timestamp, () => stop.stopped);
      if (stop.stopped) break;
      summary.sent++;
      const request = parsed.value;
      const sentAt = Date.now();
      const job = pacer.run(async () => {
        const response = await target.send({
          path: request.path,
          headers: headersFor(request, options),
          body: Buffer.from(JSON.stringify(request.body)),
          shadow: options.shadow,
        });
        const result = replayResult(request, response, { time: sentAt, target: target.kind, shadow: options.shadow });
        const failed = response.status === 0 ? !options.shadow || response.error !== undefined : response.status >= 500;
        if (failed) summary.failed++;
        output.write(`${JSON.stringify(result)}\n`);
        bar.tick(failed);
      });
      inFlight.add(job);
      void job.finally(() => inFlight.delete(job));
    }
    await Promise.all(inFlight);
  } finally {
    summary.stopped = stop.stopped;
    bar.stop();
    await target.close();
    await new Promise<void>((resolve, reject) => output.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }
  return summary;
}

export async function runReplay(args: string[], io: CliIo): Promise<number> {
  const parsed = parseOrExit("replay", args, REPLAY_USAGE, io, parseReplayArgs);
  if ("exit" in parsed) return parsed.exit;
  const options = parsed.options;
  const input = await fileProblem(options.file);
  if (input) {
    io.err(`gearbox replay: ${input}\n`);
    return 1;
  }
  const outExists = await stat(options.out).then(
    (s) => s.size > 0,
    () => false,
  );
  if (outExists && !options.resume) {
    io.err(`gearbox replay: ${options.out} already holds results: --resume to continue that run, or choose another --out\n`);
    return 2;
  }
  const stop = { stopped: false };
  const onSigint = () => {
    if (stop.stopped) {
      io.err("gearbox replay: second SIGINT, leaving now (finished lines are kept)\n");
      process.exit(130);
    }
    stop.stopped = true;
    io.err("gearbox replay: SIGINT, waiting for the requests in flight (Ctrl-C again to leave now)\n");
  };
  process.on("SIGINT", onSigint);
  try {
    const s = await replay(options, { stopSignal: stop });
    io.err(
      `gearbox replay: ${s.sent} sent (${s.failed} failed), ${s.malformed} malformed line(s) skipped${s.alreadyDone ? `, ${s.alreadyDone} already done` : ""}; results in ${options.out}\n`,
    );
    if (s.stopped) {
      io.err("gearbox replay: stopped early; run the same command with --resume to continue\n");
      return 130;
    }
    return 0;
  } finally {
    process.off("SIGINT", onSigint);
  }
}
