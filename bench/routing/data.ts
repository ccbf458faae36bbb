/**
 * Loaders for the routing benchmark data in ../shared/data/routing/ (see its README):
 * RouteLLM's MMLU responses (Mixtral-8x7B-Instruct vs GPT-4-1106-preview correctness per prompt,
 * Apache-2.0; MMLU itself MIT) and FastChat's vicuna-bench prompts (Apache-2.0).
 */
import { mulberry32 as rng } from "../../edge-agent/engines/llamacpp-sampling.ts";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const ROUTING_DATA_DIR = fileURLToPath(new URL("../../../shared/data/routing/", import.meta.url));
export const MMLU_DIR = fileURLToPath(new URL("../../../shared/data/routing/mmlu/", import.meta.url));
export const VICUNA_FILE = fileURLToPath(new URL("../../../shared/data/routing/vicuna-bench.jsonl", import.meta.url));

export const EDGE_COLUMN = "mistralai/Mixtral-8x7B-Instruct-v0.1";
export const CLOUD_COLUMN = "gpt-4-1106-preview";

export interface MmluItem {
  subject: string;
  prompt: string;
  /** Mixtral (edge) answered correctly. */
  edge: boolean;
  /** GPT-4 (cloud) answered correctly. */
  cloud: boolean;
}

export { parseCsv } from "../../extproc/routing/calibration/csv.ts";
import { parseCsv } from "../../extproc/routing/calibration/csv.ts";

export interface MmluData {
  items: MmluItem[];
  /** Rows dropped because their prompt is in contaminated_prompts.jsonl. */
  excluded: number;
  subjects: string[];
}

/** `undefined` when the data folder is absent. */
export function loadMmlu(): MmluData | undefined {
  if (!existsSync(MMLU_DIR)) return undefined;
  const contaminated = new Set<string>();
  const contaminatedFile = `${MMLU_DIR}contaminated_prompts.jsonl`;
  if (existsSync(contaminatedFile)) {
    for (const line of readFileSync(contaminatedFile, "utf8").split("\n")) {
      if (line.trim() === "") continue;
      const rec = JSON.parse(line) as { eval_prompt?: unknown; train_prompt?: unknown };
      if (typeof rec.eval_prompt === "string") contaminated.add(rec.eval_prompt.trim());
    }
  }
  const items: MmluItem[] = [];
  const subjects: string[] = [];
  let excluded = 0;
  const files = readdirSync(MMLU_DIR)
    .filter((f) => f.startsWith("mmlu_") && f.endsWith(".csv"))
    .sort();
  for (const file of files) {
    const subject = file.slice("mmlu_".length, -".csv".length);
    subjects.push(subject);
    const rows = parseCsv(readFileSync(`${MMLU_DIR}${file}`, "utf8"));
    const header = rows[0] ?? [];
    const pi = header.indexOf("prompt");
    const ei = header.indexOf(EDGE_COLUMN);
    const ci = header.indexOf(CLOUD_COLUMN);
    if (pi < 0 || ei < 0 || ci < 0) throw new Error(`${file}: missing column (have ${header.join(", ")})`);
    for (const row of rows.slice(1)) {
      const prompt = row[pi];
      if (prompt === undefined || row.length < header.length) continue;
      if (contaminated.has(prompt.trim())) {
        excluded++;
        continue;
      }
      items.push({ subject, prompt, edge: row[ei] === "True", cloud: row[ci] === "True" });
    }
  }
  return { items, excluded, subjects };
}

/** First-turn prompts of vicuna-bench; empty when the file is absent. */
export function loadVicuna(): string[] {
  if (!existsSync(VICUNA_FILE)) return [];
  const prompts: string[] = [];
  for (const line of readFileSync(VICUNA_FILE, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    const rec = JSON.parse(line) as { turns?: unknown };
    if (Array.isArray(rec.turns)) for (const t of rec.turns) if (typeof t === "string") prompts.push(t);
  }
  return prompts;
}

/** Seeded PRNG (mulberry32), the one the edge agent samples with. */
export { rng };
