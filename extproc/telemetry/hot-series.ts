/**
 * The series every request moves (`gearbox_requests_total`, the duration histogram, tokens,
 * cloud cost), counted in plain objects found by their label values and handed to prom-client's
 * registry when it is scraped. prom-client's own `inc`/`observe` build a key string from the
 * label object, look it up in a dictionary and check every label name on every call (a histogram
 * observation also allocates a closure and a wrapper): five such calls were ~3 % of a request's
 * CPU at one client in flight (bench/RESULTS.md, issue 25). Here a series is found through one
 * `Map` per label, keyed by the label values themselves (strings hash once and keep it), and
 * moved by adding to a number.
 *
 * What a scrape sees is what prom-client's own metrics would show: the same names, help, types,
 * label order and values (`hot-series.test.ts` compares the exposition with prom-client's).
 */
import { Counter, type Metric, type Registry } from "prom-client";

type Labels = Record<string, string>;

/** The series of one metric, by label values in the order of its label names. */
class SeriesTable<S> {
  private root = new Map<string, unknown>();
  /** Every series, in the order they were first moved (the exposition's order, as prom-client's). */
  all: S[] = [];

  constructor(
    private readonly names: readonly string[],
    private readonly fresh: (labels: Labels) => S,
  ) {}

  /** The series of `values` (one per label name), made the first time. */
  at(values: readonly string[]): S {
    if (values.length !== this.names.length) throw new Error(`${values.length} label values for the ${this.names.length} labels ${this.names.join(", ")}`);
    let node = this.root;
    const last = this.names.length - 1;
    for (let i = 0; i < last; i++) {
      const value = values[i] as string;
      let next = node.get(value) as Map<string, unknown> | undefined;
      if (next === undefined) node.set(value, (next = new Map<string, unknown>()));
      node = next;
    }
    const leaf = values[last] as string;
    let series = node.get(leaf) as S | undefined;
    if (series === undefined) {
      const labels: Labels = {};
      for (let i = 0; i < this.names.length; i++) labels[this.names[i] as string] = values[i] as string;
      node.set(leaf, (series = this.fresh(labels)));
      this.all.push(series);
    }
    return series;
  }

  clear(): void {
    this.root = new Map();
    this.all = [];
  }
}

interface MetricConfig {
  name: string;
  help: string;
  labelNames: readonly string[];
  registers: Registry[];
}

/** An amount prom-client would refuse (it throws on these too). */
function checkAmount(amount: number): void {
  if (!Number.isFinite(amount) || amount < 0) throw new TypeError(`Not a valid amount to add to a counter: ${amount}`);
}

/** A counter: a prom-client `Counter` that is set from these series whenever it is read. */
export class HotCounter {
  private readonly series: SeriesTable<{ labels: Labels; value: number }>;
  readonly metric: Counter;

  constructor(config: MetricConfig) {
    const series = (this.series = new SeriesTable(config.labelNames, (labels) => ({ labels, value: 0 })));
    this.metric = new Counter({
      name: config.name,
      help: config.help,
      labelNames: config.labelNames,
      registers: config.registers,
      collect() {
        this.reset();
        for (const s of series.all) this.inc(s.labels, s.value);
      },
    });
  }

  /** Adds `amount` (default 1) to the series of `values`, given in the order of the label names. */
  inc(values: readonly string[], amount = 1): void {
    checkAmount(amount);
    this.series.at(values).value += amount;
  }

  /** prom-client's view of it (tests, the registry). */
  get(): ReturnType<Counter["get"]> {
    return this.metric.get();
  }
}

interface HistogramSeries {
  labels: Labels;
  /** Observations per bucket: `[i]` those ≤ bound i and above bound i - 1; the last, above every bound. */
  buckets: Float64Array;
  sum: number;
  count: number;
}

type HistogramValue = { labels: Record<string, string | number>; value: number; metricName: string };

/**
 * A histogram, registered with the registry as prom-client's histograms are read: `get()` gives
 * cumulative `_bucket` values (`le` first, then the labels), `+Inf`, `_sum` and `_count` per
 * series, as `Histogram.get()` does.
 */
export class HotHistogram {
  readonly name: string;
  readonly help: string;
  /** As prom-client's metrics keep them (read by tools that list a registry's labels). */
  readonly labelNames: readonly string[];
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly series: SeriesTable<HistogramSeries>;
  private readonly bounds: readonly number[];

  constructor(config: MetricConfig & { buckets: readonly number[] }) {
    this.name = config.name;
    this.help = config.help;
    this.labelNames = config.labelNames;
    this.bounds = [...config.buckets].sort((a, b) => a - b);
    const size = this.bounds.length + 1;
    this.series = new SeriesTable(config.labelNames, (labels) => ({ labels, buckets: new Float64Array(size), sum: 0, count: 0 }));
    for (const registry of config.registers) registry.registerMetric(this as unknown as Metric);
  }

  /** One observation of `value` in the series of `values` (label values in the order of the label names). */
  observe(values: readonly string[], value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Not a valid value to observe: ${value}`);
    const s = this.series.at(values);
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    (s.buckets[i] as number)++;
    s.sum += value;
    s.count++;
  }

  get(): Promise<{ name: string; help: string; type: "histogram"; values: HistogramValue[]; aggregator: "sum" }> {
    const values: HistogramValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.series.all) {
      let acc = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        acc += s.buckets[i] as number;
        values.push({ labels: { le: this.bounds[i] as number, ...s.labels }, value: acc, metricName: bucket });
      }
      values.push({ labels: { le: "+Inf", ...s.labels }, value: s.count, metricName: bucket });
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...s.labels }, value: s.count, metricName: `${this.name}_count` });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: "histogram", values, aggregator: "sum" });
  }

  /** As prom-client's `reset()` (the registry's `resetMetrics`): every series gone. */
  reset(): void {
    this.series.clear();
  }
}
