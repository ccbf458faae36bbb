/**
 * `gearbox report <logs…>`: streams request logs and replay outputs (plain or gzip) through the
 * aggregator and writes report.html, summary.md and report.json into one folder.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { CliIo } from "../admin-client.ts";
import { fileProblem, parseOrExit, parseVerbArgs, UsageProblem } from "../file-verbs.ts";
import { Aggregator, type Filters } from "./aggregate.ts";
import type { ReportData } from "./report-data.ts";
import { renderCharts } from "./charts.ts";
import { reportHtml } from "./html.ts";
import { fileLines } from "./lines.ts";
import { mayBeRequest, rowOf } from "./row.ts";
import { summaryMarkdown } from "./summary.ts";

export const REPORT_USAGE = `usage: gearbox report [options] <file>...

Reads Gearbox request logs (the JSON lines 'gearbox serve' writes on stdout; other lines are
skipped) and 'gearbox replay' outputs, plain or gzip, and writes into the output folder:
  report.html   charts and tables, self-contained (opens offline)
  summary.md    the three questions (cost, quality, stability) answered with numbers
  report.json   every number
options:
  --out <dir>        output folder (default ./gearbox-report)
  --since <time>     only requests at or after this time (ISO 8601, e.g. 2025-06-01T00:00:00Z)
  --until <time>     only requests before this time
  --tenant <id>      only this tenant (repeat for several)
  --model <name>     only this requested model (repeat for several)
example:
  gearbox serve > gearbox.log          # later:
  gearbox report gearbox.log --out report/
`;

export interface ReportOptions {
  files: string[];
  out: string;
  filters: Filters;
}

export interface ReportFiles {
  html: string;
  markdown: string;
  json: string;
  data: ReportData;
}

function time(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const t = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (Number.isNaN(t)) throw new UsageProblem(`--${name} '${value}' is not a time (use ISO 8601, e.g. 2025-06-01T00:00:00Z)`);
  return t;
}

export function parseReportArgs(args: string[]): ReportOptions {
  const parsed = parseVerbArgs(args, {
    out: { type: "string" },
    since: { type: "string" },
    until: { type: "string" },
    tenant: { type: "string", multiple: true },
    model: { type: "string", multiple: true },
  });
  const { values, positionals } = parsed;
  if (positionals.length === 0) throw new UsageProblem("no log file given");
  const since = time("since", values.since);
  const until = time("until", values.until);
  if (since !== undefined && until !== undefined && until <= since) throw new UsageProblem("--until must be after --since");
  return {
    files: positionals,
    out: values.out ?? "gearbox-report",
    filters: { since, until, tenants: values.tenant ? new Set(values.tenant) : undefined, models: values.model ? new Set(values.model) : undefined },
  };
}

/** Streams every file through one aggregator. */
export async function aggregateFiles(files: readonly string[], filters: Filters): Promise<Aggregator> {
  const agg = new Aggregator(filters);
  for (const file of files) {
    for await (const line of fileLines(file)) {
      agg.lines.read++;
      if (!mayBeRequest(line)) {
        agg.lines.not_requests++;
        continue;
      }
      let entry: unknown;
      try {
        entry = JSON.parse(line);
      } catch {
        agg.lines.malformed++;
        continue;
      }
      const row = rowOf(entry);
      if (row) agg.add(row);
      else agg.lines.not_requests++;
    }
  }
  return agg;
}

export async function writeReport(options: ReportOptions): Promise<ReportFiles> {
  const agg = await aggregateFiles(options.files, options.filters);
  const data = agg.result(options.files);
  const charts = await renderCharts(data);
  await mkdir(options.out, { recursive: true });
  const files = { html: path.join(options.out, "report.html"), markdown: path.join(options.out, "summary.md"), json: path.join(options.out, "report.json") };
  await writeFile(files.json, `${JSON.stringify(data, null, 2)}\n`);
  await writeFile(files.markdown, summaryMarkdown(data));
  await writeFile(files.html, reportHtml(data, charts));
  return { ...files, data };
}

export async function runReport(args: string[], io: CliIo): Promise<number> {
  const parsed = parseOrExit("report", args, REPORT_USAGE, io, parseReportArgs);
  if ("exit" in parsed) return parsed.exit;
  const options = parsed.options;
  for (const file of options.files) {
    const problem = await fileProblem(file);
    if (problem) {
      io.err(`gearbox report: ${problem}\n`);
      return 1;
    }
  }
  let result: ReportFiles;
  try {
    result = await writeReport(options);
  } catch (err) {
    io.err(`gearbox report: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  const d = result.data;
  io.out(
    `gearbox report: ${d.requests.total} requests (${d.lines.read} lines read, ${d.lines.not_requests} other lines skipped, ${d.lines.malformed} malformed, ${d.lines.filtered_out} filtered out)\n` +
      `  ${result.html}\n  ${result.markdown}\n  ${result.json}\n`,
  );
  return 0;
}
