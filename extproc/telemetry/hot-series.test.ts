import assert from "node:assert/strict";
import { test } from "node:test";
import { Counter, Histogram, Registry } from "prom-client";
import { HotCounter, HotHistogram } from "./hot-series.ts";

const COUNTER = { name: "t_requests_total", help: "Requests.", labelNames: ["endpoint", "route", "status"] };
const HISTOGRAM = { name: "t_duration_seconds", help: "Durations.", labelNames: ["endpoint", "route"], buckets: [0.01, 0.1, 1, 10] };

/** The same moves on prom-client's own metrics and on the hot ones: the scrapes must read alike. */
test("a scrape of hot series reads exactly as prom-client's own counter and histogram would", async () => {
  const own = new Registry();
  const hot = new Registry();
  const counter = new Counter({ ...COUNTER, registers: [own] });
  const histogram = new Histogram({ ...HISTOGRAM, registers: [own] });
  const hotCounter = new HotCounter({ ...COUNTER, registers: [hot] });
  const hotHistogram = new HotHistogram({ ...HISTOGRAM, registers: [hot] });

  const moves: [string, string, string, number][] = [
    ["chat", "cloud", "200", 0.004],
    ["chat", "edge", "200", 0.1], // on a bound: counted in it (le)
    ["embeddings", "cloud", "500", 42], // above every bound: +Inf only
    ["chat", "cloud", "200", 0.25],
    ["chat", "cloud", "429", 0],
    ["chat", "cloud", "200", 3.5],
    ['we"ird\\name', "cloud", "200", 1],
  ];
  for (const [endpoint, route, status, seconds] of moves) {
    counter.inc({ endpoint, route, status });
    hotCounter.inc([endpoint, route, status]);
    histogram.observe({ endpoint, route }, seconds);
    hotHistogram.observe([endpoint, route], seconds);
  }
  counter.inc({ endpoint: "chat", route: "cloud", status: "200" }, 2.5);
  hotCounter.inc(["chat", "cloud", "200"], 2.5);

  assert.equal(await hot.metrics(), await own.metrics());
  // Read again (the counter is set anew from its series at every read): still the same.
  assert.equal(await hot.metrics(), await own.metrics());
  const values = (await hotCounter.get()).values;
  assert.equal(values.find((v) => v.labels.endpoint === "chat" && v.labels.route === "cloud" && v.labels.status === "200")?.value, 5.5);
  assert.equal((await hot.getSingleMetric(HISTOGRAM.name)?.get())?.type, "histogram");
});

test("amounts and values prom-client refuses are refused; a wrong number of label values is an error", () => {
  const registry = new Registry();
  const counter = new HotCounter({ ...COUNTER, registers: [registry] });
  const histogram = new HotHistogram({ ...HISTOGRAM, registers: [registry] });
  for (const bad of [Number.NaN, -1, Number.POSITIVE_INFINITY]) assert.throws(() => counter.inc(["chat", "cloud", "200"], bad), TypeError);
  assert.throws(() => histogram.observe(["chat", "cloud"], Number.NaN), TypeError);
  assert.throws(() => counter.inc(["chat", "cloud"]), /2 label values for the 3 labels/);
});

test("reset empties a histogram, as the registry's resetMetrics does prom-client's", async () => {
  const registry = new Registry();
  const histogram = new HotHistogram({ ...HISTOGRAM, registers: [registry] });
  histogram.observe(["chat", "cloud"], 0.5);
  assert.match(await registry.metrics(), /t_duration_seconds_count\{endpoint="chat",route="cloud"\} 1/);
  registry.resetMetrics();
  assert.doesNotMatch(await registry.metrics(), /t_duration_seconds_count/);
});
