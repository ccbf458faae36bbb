/**
 * Scrapes a Prometheus text-format endpoint into samples that tests can subtract and query:
 * `get(name, labels)` is the one series with exactly those labels (0 when absent), `sum(name)`
 * adds every series of the name.
 */

export class Samples {
  constructor(readonly series: ReadonlyMap<string, number>) {}

  static parse(text: string): Samples {
    const series = new Map<string, number>();
    for (const line of text.split("\n")) {
      if (line === "" || line.startsWith("#")) continue;
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)(\s+\d+)?$/.exec(line);
      if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
      const [, name = "", labels = "", value = ""] = match;
      series.set(key(name, parseLabels(labels)), Number(value));
    }
    return new Samples(series);
  }

  get(name: string, labels: Record<string, string> = {}): number {
    return this.series.get(key(name, labels)) ?? 0;
  }

  sum(name: string): number {
    let total = 0;
    for (const [k, v] of this.series) if (k === name || k.startsWith(`${name}{`)) total += v;
    return total;
  }

  /** Metric names present (histogram and summary parts included). */
  names(): Set<string> {
    return new Set([...this.series.keys()].map((k) => k.split("{")[0] ?? k));
  }

  /** This scrape minus an earlier one (series absent before count from 0). */
  minus(earlier: Samples): Samples {
    const out = new Map<string, number>();
    for (const [k, v] of this.series) out.set(k, v - (earlier.series.get(k) ?? 0));
    return new Samples(out);
  }
}

function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
  for (let m = re.exec(text); m; m = re.exec(text)) labels[m[1] ?? ""] = (m[2] ?? "").replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
  return labels;
}

function key(name: string, labels: Record<string, string>): string {
  const entries = Object.entries(labels).sort(([a], [b]) => a.localeCompare(b));
  return entries.length === 0 ? name : `${name}{${entries.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(",")}}`;
}

/** GET `url` (a `/metrics` endpoint) and parse it. */
export async function scrape(url: string): Promise<Samples> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status}`);
  return Samples.parse(await res.text());
}
