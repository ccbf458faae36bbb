/** The fault bench's markdown table: one line per scenario, then its notes. */
import type { Row } from "./tally.ts";

const ms = (n: number | undefined): string => (n === undefined || Number.isNaN(n) ? "–" : n.toFixed(1));
const mb = (row: Row): string =>
  row.memoryBefore && row.memoryAfter
    ? `${row.memoryBefore.rssMb.toFixed(0)}→${row.memoryAfter.rssMb.toFixed(0)} / ${row.memoryBefore.heapMb.toFixed(0)}→${row.memoryAfter.heapMb.toFixed(0)}`
    : "–";

function failedCell(row: Row): string {
  const entries = Object.entries(row.failed).sort((a, b) => b[1] - a[1]);
  return entries.length === 0 ? "0" : entries.map(([cause, n]) => `${n} \`${cause}\``).join(", ");
}

export function markdownTable(rows: readonly Row[]): string {
  const head = [
    "| # | scenario | via | sent | ok | refused by a limit | failed (by cause) | over a limit | upstream calls (extra) | fallbacks | p50 / p99 ms (baseline p50) | RSS / heap MB before→after | goal | met |",
    "|---|---|---|---:|---:|---:|---|---:|---|---:|---|---|---|---|",
  ];
  const lines = rows.map((row, i) =>
    [
      "",
      String(i + 1),
      row.scenario,
      row.transport,
      String(row.sent),
      String(row.succeeded),
      String(row.refusedByLimit),
      failedCell(row),
      row.overLimit === null ? "–" : String(row.overLimit),
      `${row.upstreamCalls} (+${row.extraCalls}, ${(row.extraShare * 100).toFixed(1)} %)`,
      String(row.fallbacks),
      `${ms(row.p50)} / ${ms(row.p99)}${row.baselineP50 !== undefined ? ` (${ms(row.baselineP50)})` : ""}`,
      mb(row),
      row.goal?.text ?? "–",
      row.goal ? (row.goal.met ? "yes" : "**no**") : "–",
      "",
    ]
      .join(" | ")
      .trim(),
  );
  const notes = rows.flatMap((row, i) => row.notes.map((note) => `- ${i + 1}: ${note}`));
  return [...head, ...lines, "", ...notes].join("\n");
}
