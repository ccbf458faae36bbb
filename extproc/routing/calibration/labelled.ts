/**
 * Labelled routing data: one prompt with how well the edge and the cloud answered it. Read from
 * CSV (RouteLLM's layout: `prompt`, then the weak model's and the strong model's True/False
 * columns) or JSON lines (`{"prompt", "edge", "cloud", "group"?, "intent"?}`). Scores 0–1 are
 * accepted where flags are (a judge's grade). Validation returns every problem at once.
 */
import { basename } from "node:path";
import { fail, ok, type Result } from "../../../common/result.ts";
import { parseCsv } from "./csv.ts";

export interface LabelledRow {
  prompt: string;
  edge: number;
  cloud: number;
  /** Cluster for the bound: the group column, else the file's name. */
  group: string;
  intent?: string;
}

export interface ColumnChoice {
  edge?: string;
  cloud?: string;
  group?: string;
  intent?: string;
}

export interface ParsedFile {
  rows: LabelledRow[];
  /** How the columns were chosen, for the policy's evidence. */
  columns: { edge: string; cloud: string; group: string };
}

const EDGE_NAMES = ["edge", "edge_correct", "edge_score", "weak"];
const CLOUD_NAMES = ["cloud", "cloud_correct", "cloud_score", "strong"];

/** `True`/`False`, `1`/`0`, `yes`/`no` or a number 0–1. */
export function parseGrade(value: unknown): number | undefined {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "number") return value >= 0 && value <= 1 ? value : undefined;
  if (typeof value !== "string") return undefined;
  const v = value.trim().toLowerCase();
  if (v === "true" || v === "yes") return 1;
  if (v === "false" || v === "no") return 0;
  if (v === "" || !/^[0-9.]+$/.test(v)) return undefined;
  const n = Number(v);
  return n >= 0 && n <= 1 ? n : undefined;
}

function pick(header: readonly string[], wanted: string | undefined, names: readonly string[], fallback: number): string | undefined {
  if (wanted !== undefined) return header.includes(wanted) ? wanted : undefined;
  return header.find((h) => names.includes(h.toLowerCase())) ?? header[fallback];
}

export function parseLabelledCsv(text: string, file: string, choice: ColumnChoice = {}): Result<ParsedFile> {
  const rows = parseCsv(text);
  const header = rows[0] ?? [];
  const pi = header.indexOf("prompt");
  if (pi < 0) return fail(`${file}: no 'prompt' column (have ${header.join(", ")})`);
  const others = header.filter((h, i) => i !== pi);
  // RouteLLM's files: prompt, weak model, strong model — the weak one is the edge.
  const edge = pick(others, choice.edge, EDGE_NAMES, 0);
  const cloud = pick(others, choice.cloud, CLOUD_NAMES, 1);
  const errors: string[] = [];
  if (edge === undefined) errors.push(`${file}: edge column '${choice.edge ?? "?"}' not found (have ${header.join(", ")})`);
  if (cloud === undefined) errors.push(`${file}: cloud column '${choice.cloud ?? "?"}' not found (have ${header.join(", ")})`);
  if (edge !== undefined && edge === cloud) errors.push(`${file}: the edge and cloud columns are both '${edge}'`);
  if (choice.group !== undefined && !header.includes(choice.group)) errors.push(`${file}: group column '${choice.group}' not found`);
  if (errors.length > 0 || edge === undefined || cloud === undefined) return fail(...errors);
  const ei = header.indexOf(edge);
  const ci = header.indexOf(cloud);
  const gi = choice.group === undefined ? -1 : header.indexOf(choice.group);
  const ii = header.indexOf(choice.intent ?? "intent");
  const group = basename(file).replace(/\.[^.]+$/, "");
  const out: LabelledRow[] = [];
  rows.slice(1).forEach((row, k) => {
    if (row.length === 1 && row[0] === "") return;
    const e = parseGrade(row[ei]);
    const c = parseGrade(row[ci]);
    if (e === undefined || c === undefined || row[pi] === undefined) {
      if (errors.length < 5) errors.push(`${file}: row ${k + 2}: edge '${row[ei] ?? ""}' / cloud '${row[ci] ?? ""}' is not a flag or a 0–1 score`);
      return;
    }
    const intent = ii >= 0 ? row[ii] : undefined;
    out.push({ prompt: row[pi], edge: e, cloud: c, group: gi >= 0 ? (row[gi] ?? group) : group, ...(intent ? { intent } : {}) });
  });
  if (errors.length > 0) return fail(...errors);
  return ok({ rows: out, columns: { edge, cloud, group: choice.group ?? "(file name)" } });
}

export function parseLabelledJsonl(text: string, file: string, choice: ColumnChoice = {}): Result<ParsedFile> {
  const edgeKey = choice.edge ?? "edge";
  const cloudKey = choice.cloud ?? "cloud";
  const groupKey = choice.group ?? "group";
  const fallbackGroup = basename(file).replace(/\.[^.]+$/, "");
  const rows: LabelledRow[] = [];
  const errors: string[] = [];
  text.split("\n").forEach((line, k) => {
    if (line.trim() === "") return;
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(line) as Record<string, unknown>;
    } catch {
      if (errors.length < 5) errors.push(`${file}: line ${k + 1}: not JSON`);
      return;
    }
    const e = parseGrade(rec[edgeKey]);
    const c = parseGrade(rec[cloudKey]);
    if (typeof rec.prompt !== "string" || e === undefined || c === undefined) {
      if (errors.length < 5) errors.push(`${file}: line ${k + 1}: needs "prompt" and "${edgeKey}"/"${cloudKey}" as flags or 0–1 scores`);
      return;
    }
    const g = rec[groupKey];
    const intent = rec[choice.intent ?? "intent"];
    rows.push({ prompt: rec.prompt, edge: e, cloud: c, group: typeof g === "string" ? g : fallbackGroup, ...(typeof intent === "string" ? { intent } : {}) });
  });
  if (errors.length > 0) return fail(...errors);
  return ok({ rows, columns: { edge: edgeKey, cloud: cloudKey, group: choice.group ?? "group (else the file name)" } });
}

export function parseLabelled(text: string, file: string, choice: ColumnChoice = {}): Result<ParsedFile> {
  return /\.jsonl?$/i.test(file) ? parseLabelledJsonl(text, file, choice) : parseLabelledCsv(text, file, choice);
}
