/** Accuracy and per-intent precision/recall, printed as Markdown tables for README.md. */
import { INTENTS, type Intent } from "../../extproc/routing/intent/intents.ts";

export interface Scored {
  gold: Intent;
  predicted: Intent;
}

export function accuracy(rows: readonly Scored[]): number {
  return rows.length === 0 ? 0 : rows.filter((r) => r.gold === r.predicted).length / rows.length;
}

const pct = (v: number): string => (Number.isNaN(v) ? "–" : `${(100 * v).toFixed(1)}`);

/** Per-intent precision, recall and support (gold count), as a Markdown table. */
export function perIntentTable(rows: readonly Scored[]): string {
  const lines = ["| intent | precision % | recall % | support |", "|---|---:|---:|---:|"];
  for (const intent of INTENTS) {
    const gold = rows.filter((r) => r.gold === intent).length;
    const predicted = rows.filter((r) => r.predicted === intent).length;
    const hit = rows.filter((r) => r.gold === intent && r.predicted === intent).length;
    if (gold === 0 && predicted === 0) continue;
    lines.push(`| ${intent} | ${pct(hit / predicted)} | ${pct(hit / gold)} | ${gold} |`);
  }
  return lines.join("\n");
}

/** Confusions (gold → predicted) with their counts, most frequent first. */
export function topConfusions(rows: readonly Scored[], n: number): string {
  const counts = new Map<string, number>();
  for (const r of rows) if (r.gold !== r.predicted) counts.set(`${r.gold} → ${r.predicted}`, (counts.get(`${r.gold} → ${r.predicted}`) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, n)
    .map(([k, v]) => `${k}: ${v}`)
    .join("; ");
}
