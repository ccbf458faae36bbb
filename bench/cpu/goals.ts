/**
 * Issue 25's goals, judged on one run of the CPU bench, each figure beside the same run's
 * baseline (the bare proxy's cost moved up to ~3× between sessions on this shared machine, the
 * ratio far less: bench/RESULTS.md). With `--runs N` every run is judged and the bench ends with
 * one table: each goal's figure per run, in how many runs it was met, and in how many every goal
 * was met at once.
 */

/** One target's medians in one scenario. */
export interface Row {
  rps: number;
  p50: number;
  p99: number;
  firstByteP50: number;
  /** The first byte's way there (client → upstream's read) and back (→ client), p50 ms. */
  thereP50: number;
  backP50: number;
  cpuPerRequestMs: number;
  errors: number;
}

/** One run's scenarios, rows by target name; a scenario left out (`--only`) is an empty map. */
export interface Scenarios {
  json1: Map<string, Row>;
  json16: Map<string, Row>;
  json64: Map<string, Row>;
  stream16: Map<string, Row>;
  first: Map<string, Row>;
  ext: Map<string, Row>;
}

export interface Verdict {
  goal: string;
  /** Gearbox's figure, as printed. */
  figure: string;
  /** The same run's baseline it stands beside. */
  beside: string;
  met: boolean;
}

/** The targets' names: the bench's rows are keyed by them, and the goals read those rows. */
export const TARGET = {
  gearbox: "Gearbox front door",
  base: "Gearbox base",
  baseExtProc: "Gearbox base ext_proc",
  bare: "bare proxy",
  direct: "direct (no proxy)",
  portkey: "Portkey 1.15.2",
  gearboxExtProc: "Gearbox ext_proc",
  noopExtProc: "no-op ext_proc",
} as const;
const { gearbox: GEARBOX, bare: BARE, direct: DIRECT, portkey: PORTKEY, gearboxExtProc: GEARBOX_EXT_PROC, noopExtProc: NOOP_EXT_PROC } = TARGET;

/** How many goals issue 25 sets: the front door's nine (four CPU, the first byte, Portkey's four), ext_proc's one. */
const GOALS = 10;

const ms = (x: number) => x.toFixed(3);
/** A difference with its sign: `+0.12`, `−0.05`. */
const signed = (x: number, digits: number) => `${x < 0 ? "−" : "+"}${Math.abs(x).toFixed(digits)}`;
const times = (a: number, b: number) => `${(a / b).toFixed(2)}×`;

/** Every goal whose scenario ran (Portkey's only with Portkey in the run). */
export function verdicts(s: Scenarios): Verdict[] {
  const out: Verdict[] = [];
  const cpu = (scenario: Map<string, Row>, goal: string, limit: number) => {
    const g = scenario.get(GEARBOX);
    const b = scenario.get(BARE);
    if (!g || !b) return;
    const [x, y] = [g.cpuPerRequestMs, b.cpuPerRequestMs];
    out.push({ goal, figure: `${ms(x)} ms`, beside: `bare proxy ${ms(y)} ms, ${times(x, y)}`, met: x <= limit });
  };
  cpu(s.json1, "front door CPU ≤ 0.3 ms per JSON request, 1 client", 0.3);
  cpu(s.json16, "front door CPU ≤ 0.3 ms per JSON request, 16 clients", 0.3);
  cpu(s.json64, "front door CPU ≤ 0.3 ms per JSON request, 64 clients", 0.3);
  cpu(s.stream16, "front door CPU ≤ 0.4 ms per 20-chunk stream, 16 clients", 0.4);

  const direct = s.first.get(DIRECT);
  const [g, b] = [s.first.get(GEARBOX), s.first.get(BARE)];
  if (direct && g && b) {
    const over = (r: Row, k: "firstByteP50" | "thereP50" | "backP50") => r[k] - direct[k];
    const ways = (r: Row) => `there ${signed(over(r, "thereP50"), 2)}, back ${signed(over(r, "backP50"), 2)}`;
    out.push({
      goal: "streaming first byte ≤ +0.5 ms over direct (p50, 1 client)",
      figure: `${signed(over(g, "firstByteP50"), 2)} ms`,
      beside: `${ways(g)}; bare proxy ${signed(over(b, "firstByteP50"), 2)} ms, ${ways(b)}`,
      met: over(g, "firstByteP50") <= 0.5,
    });
  }

  for (const [clients, scenario] of [
    ["16", s.json16],
    ["64", s.json64],
  ] as const) {
    const [a, p, bare] = [scenario.get(GEARBOX), scenario.get(PORTKEY), scenario.get(BARE)];
    if (!a || !p) continue;
    // The bare proxy's own figures against Portkey: the floor this machine sets in this run.
    const share = (r: Row) => `${((r.p99 / p.p99) * 100).toFixed(1)} %`;
    out.push({
      goal: `≥ 4× Portkey's req/s, ${clients} clients`,
      figure: times(a.rps, p.rps),
      beside: `${a.rps.toFixed(0)} against ${p.rps.toFixed(0)} req/s${bare ? `; bare proxy ${times(bare.rps, p.rps)}` : ""}`,
      met: a.rps >= 4 * p.rps,
    });
    out.push({
      goal: `≤ ¼ of Portkey's p99, ${clients} clients`,
      figure: share(a),
      beside: `${a.p99.toFixed(2)} against ${p.p99.toFixed(2)} ms${bare ? `; bare proxy ${share(bare)}` : ""}`,
      met: a.p99 <= p.p99 / 4,
    });
  }

  const [gx, nx] = [s.ext.get(GEARBOX_EXT_PROC), s.ext.get(NOOP_EXT_PROC)];
  if (gx && nx) {
    const extra = gx.cpuPerRequestMs - nx.cpuPerRequestMs;
    out.push({
      goal: "ext_proc CPU ≤ +0.2 ms per cycle over the no-op",
      figure: `${signed(extra, 3)} ms`,
      beside: `no-op ${ms(nx.cpuPerRequestMs)} ms, ${times(gx.cpuPerRequestMs, nx.cpuPerRequestMs)}; cycles/s ${((gx.rps / nx.rps) * 100).toFixed(0)} % of the no-op's`,
      met: extra <= 0.2,
    });
  }
  return out;
}

/** One run's verdicts, a line each. */
export function verdictLines(verdicts: readonly Verdict[]): string {
  const lines = verdicts.map((v) => `- ${v.goal}: ${v.figure} (${v.beside}) — ${v.met ? "met" : "**missed**"}`);
  const all = verdicts.length > 0 && verdicts.every((v) => v.met);
  // Without Portkey, or with `--only`, fewer goals are judged: "every" means every one judged.
  return ["\n### Against the goals\n", ...lines, `\nEvery goal judged (${verdicts.length} of ${GOALS}) met in this run: ${all ? "yes" : "no"}`].join("\n");
}

/** Several runs' verdicts: a goal per row (every goal judged in any run), a run per column. */
export function runsTable(runs: readonly (readonly Verdict[])[]): string {
  const goals = [...new Set(runs.flatMap((r) => r.map((v) => v.goal)))];
  const header = `| goal | ${runs.map((_, i) => `run ${i + 1}`).join(" | ")} | met |`;
  const rule = `|---|${runs.map(() => "---:|").join("")}---|`;
  const rows = goals.map((goal) => {
    const cells = runs.map((r) => r.find((v) => v.goal === goal));
    const met = cells.filter((c) => c?.met).length;
    return `| ${goal} | ${cells.map((c) => (c ? (c.met ? c.figure : `**${c.figure}**`) : "–")).join(" | ")} | ${met} of ${runs.length} |`;
  });
  const together = runs.map((r) => r.length > 0 && r.every((v) => v.met));
  const every = `| every goal judged (${goals.length} of ${GOALS}) at once | ${together.map((t) => (t ? "yes" : "no")).join(" | ")} | ${together.filter(Boolean).length} of ${runs.length} |`;
  return ["\n### Against the goals, every run (missed in bold)\n", header, rule, ...rows, every].join("\n");
}
