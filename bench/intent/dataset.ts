/**
 * Assembles the labelled intent dataset from ../shared/data (see README.md for each part's
 * origin) plus seeded synthetic prompts, and splits it train/test per source.
 */
import { mulberry32 as rng } from "../../edge-agent/engines/llamacpp-sampling.ts";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Intent } from "../../extproc/routing/intent/intents.ts";
import { CODE_SNIPPETS, type SyntheticIntent, TEMPLATES } from "./templates.ts";
import { words } from "./words.ts";

export interface Example {
  text: string;
  intent: Intent;
  /** Where the example comes from, e.g. `mmlu`, `qqp`, `synthetic:summarize:zh`. */
  source: string;
}

export const DATA_DIR = process.env.GEARBOX_DATA ?? new URL("../../../shared/data/", import.meta.url).pathname;
/** Caps per real source, so `qa` does not swamp the other labels. */
const CAP = { mmluQa: 1800, enQa: 1200, zhQa: 1200 };
const SYNTHETIC_PER_LANG = 600;
const UNKNOWN_COUNT = 600;

/** Seeded PRNG (mulberry32), the one the edge agent samples with. */
export { rng };

function pick<T>(r: () => number, list: readonly T[]): T {
  const v = list[Math.floor(r() * list.length)];
  if (v === undefined) throw new Error("pick from an empty list");
  return v;
}

export function shuffle<T>(r: () => number, list: T[]): T[] {
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    const t = list[i] as T;
    list[i] = list[j] as T;
    list[j] = t;
  }
  return list;
}

function sample<T>(r: () => number, list: readonly T[], n: number): T[] {
  return shuffle(r, [...list]).slice(0, n);
}

/** RFC 4180 CSV: quoted fields may hold commas, quotes ("") and newlines. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === "," || c === "\n") {
      row.push(field);
      field = "";
      if (c === "\n") {
        rows.push(row);
        row = [];
      }
    } else if (c !== "\r") field += c;
  }
  if (field !== "" || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

const MATH_SUBJECTS = new Set(["abstract_algebra", "college_mathematics"]);

function loadMmlu(r: () => number): { math: Example[]; qa: Example[]; stems: string[] } {
  const dir = join(DATA_DIR, "routing/mmlu");
  const contaminated = new Set(
    readFileSync(join(dir, "contaminated_prompts.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { eval_prompt?: string }).eval_prompt?.trim() ?? ""),
  );
  const math: Example[] = [];
  const qa: Example[] = [];
  const stems: string[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".csv"))
    .sort()) {
    const subject = file.replace(/^mmlu_|\.csv$/g, "");
    for (const row of parseCsv(readFileSync(join(dir, file), "utf8")).slice(1)) {
      const prompt = row[0]?.trim();
      if (!prompt || contaminated.has(prompt)) continue;
      const stem = prompt.split(/\nA\. /)[0]?.trim() ?? prompt;
      stems.push(stem);
      // Half the prompts keep MMLU's lettered options, half are the bare question.
      const text = r() < 0.5 ? prompt : stem;
      (MATH_SUBJECTS.has(subject) ? math : qa).push({
        text,
        intent: MATH_SUBJECTS.has(subject) ? "math" : "qa",
        source: MATH_SUBJECTS.has(subject) ? "mmlu-math" : "mmlu",
      });
    }
  }
  return { math, qa: sample(r, qa, CAP.mmluQa), stems };
}

/**
 * English passages: GPTCache's mock sentences (MIT). QQP and LCQMC are research-use only, so
 * the weights that ship are not trained on them.
 */
function loadGptcache(): string[] {
  const rows = JSON.parse(readFileSync(join(DATA_DIR, "paraphrase/gptcache-mock.json"), "utf8")) as { origin: string; similar: string }[];
  return [...new Set(rows.flatMap((p) => [p.origin.trim(), p.similar.trim()]))].filter((t) => t.length > 8);
}

/** Chinese passages: PAWS-X zh dev sentences (free for any use, with attribution). */
function loadPawsxZh(): string[] {
  const lines = readFileSync(join(DATA_DIR, "paraphrase/pawsx-zh-dev.tsv"), "utf8").split("\n").slice(1);
  return [...new Set(lines.flatMap((l) => l.split("\t").slice(1, 3)).map((t) => t.trim()))].filter((t) => t.length > 3);
}

/** English everyday questions (synthetic templates over GPTCache's sentences). */
const EN_QA = [
  "Is it true that {p}?",
  "Why is it that {p}?",
  "Can you explain how {p}?",
  "What does it mean that {p}?",
  "How do we know that {p}?",
  "Who decided that {p}?",
  "When did it happen that {p}?",
  "Why do people say that {p}?",
  "Where can I read about how {p}?",
  "What is the reason {p}?",
];

/** Chinese questions about a passage (synthetic templates over PAWS-X sentences). */
const ZH_QA = ["{p}这是真的吗？", "关于“{p}”，能解释一下吗？", "{p}这句话是什么意思？", "为什么说{p}", "{p}请问这件事发生在哪里？", "谁知道{p}背后的原因？"];

/** The 80 vicuna-bench prompts, mapped to intents; an evaluation set only, never trained on. */
export const VICUNA_MAP: Record<string, Intent> = {
  generic: "qa",
  knowledge: "qa",
  "common-sense": "qa",
  fermi: "multi_hop_reasoning",
  counterfactual: "multi_hop_reasoning",
  roleplay: "creative_writing",
  writing: "creative_writing",
  coding: "code_gen",
  math: "math",
};

export function loadVicuna(): Example[] {
  return readFileSync(join(DATA_DIR, "routing/vicuna-bench.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { category: string; turns: string[] })
    .map((q) => {
      const intent = VICUNA_MAP[q.category];
      if (!intent) throw new Error(`vicuna-bench: unmapped category '${q.category}'`);
      return { text: q.turns[0] ?? "", intent, source: `vicuna:${q.category}` };
    });
}

interface Pools {
  en: readonly string[];
  zh: readonly string[];
}

function passage(r: () => number, pool: readonly string[], sep: string): string {
  const n = 1 + Math.floor(r() * r() * 5);
  return Array.from({ length: n }, () => pick(r, pool)).join(sep);
}

function fill(r: () => number, template: string, pools: Pools): string {
  return template.replace(/\{(\w+)\}/g, (_m, slot: string) => {
    switch (slot) {
      case "P":
        return passage(r, pools.en, " ");
      case "ZP":
        return passage(r, pools.zh, "");
      case "N":
        return String(r() < 0.7 ? 2 + Math.floor(r() * 98) : Math.floor(r() * 5000));
      case "CODE":
        return pick(r, CODE_SNIPPETS).replaceAll("{id}", pick(r, ["f", "total", "items", "solve", "helper", "data", "process", "calc"]));
      default:
        return pick(r, words(slot));
    }
  });
}

const GARBAGE_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789      !?.,;:#@$%&*~^_-=+/\\|<>[]{}";

function garbage(r: () => number): string {
  const kind = r();
  if (kind < 0.4) return Array.from({ length: 3 + Math.floor(r() * 40) }, () => pick(r, [...GARBAGE_CHARS])).join("");
  if (kind < 0.6)
    return Array.from({ length: 1 + Math.floor(r() * 4) }, () =>
      pick(r, ["asdf", "qwer", "jkl;", "zxcv", "hjkl", "uiop", "sdfg", "lorem", "ipsum", "dolor", "sit", "amet", "xyz", "aaaa"]),
    ).join(pick(r, [" ", "", "  "]));
  if (kind < 0.75) return Array.from({ length: 1 + Math.floor(r() * 6) }, () => pick(r, [..."啊的了是我不在有人这中大为上个国"])).join("");
  if (kind < 0.9) return Math.floor(r() * 1e9).toString(16) + pick(r, ["", "==", "-", " ", "0x"]) + Math.floor(r() * 1e6).toString(36);
  return pick(r, ["test", "testing", "123", "ping", ".", "???", "...", "null", "undefined", "[object Object]", "asdf", "测试", "111", "x", "ok?"]);
}

export interface Dataset {
  train: Example[];
  test: Example[];
  vicuna: Example[];
  /** Counts per source, for the README. */
  sources: Record<string, number>;
}

/** Builds the whole dataset deterministically from `seed`; 20 % of each source is the test split. */
export function buildDataset(seed: number, testShare = 0.2): Dataset {
  const r = rng(seed);
  const mmlu = loadMmlu(r);
  const english = loadGptcache();
  const chinese = loadPawsxZh();
  const all: Example[] = [...mmlu.math, ...mmlu.qa];
  const lower = (t: string) => t.charAt(0).toLowerCase() + t.slice(1).replace(/[.!?]$/, "");
  all.push(...sample(r, english, CAP.enQa).map((p): Example => ({ text: pick(r, EN_QA).replace("{p}", lower(p)), intent: "qa", source: "synthetic:qa:en" })));
  all.push(
    ...sample(r, chinese, CAP.zhQa).map((p): Example => ({
      text: pick(r, ZH_QA).replace("{p}", p.replace(/[。！？]$/, "")),
      intent: "qa",
      source: "synthetic:qa:zh",
    })),
  );
  const pools: Pools = { en: [...english, ...mmlu.stems.filter((s) => s.length < 400)], zh: chinese };
  for (const intent of Object.keys(TEMPLATES) as SyntheticIntent[]) {
    for (const lang of ["en", "zh"] as const) {
      const seen = new Set<string>();
      const templates = TEMPLATES[intent][lang];
      for (let i = 0; i < SYNTHETIC_PER_LANG * 4 && seen.size < SYNTHETIC_PER_LANG; i++) seen.add(fill(r, pick(r, templates), pools));
      for (const text of seen) all.push({ text, intent, source: `synthetic:${intent}:${lang}` });
    }
  }
  const junk = new Set<string>();
  for (let i = 0; i < UNKNOWN_COUNT * 4 && junk.size < UNKNOWN_COUNT; i++) junk.add(garbage(r));
  for (const text of junk) all.push({ text, intent: "unknown", source: "synthetic:unknown" });

  const bySource = new Map<string, Example[]>();
  for (const e of all) {
    const list = bySource.get(e.source);
    if (list) list.push(e);
    else bySource.set(e.source, [e]);
  }
  const train: Example[] = [];
  const test: Example[] = [];
  const sources: Record<string, number> = {};
  for (const [source, list] of [...bySource.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    sources[source] = list.length;
    shuffle(r, list);
    const cut = Math.round(list.length * testShare);
    test.push(...list.slice(0, cut));
    train.push(...list.slice(cut));
  }
  return { train: shuffle(r, train), test, vicuna: loadVicuna(), sources };
}
