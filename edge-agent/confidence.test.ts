import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfidenceMeter, confidenceField } from "./confidence.ts";

test("confidence is the geometric mean of token probabilities", () => {
  const meter = new ConfidenceMeter();
  for (const p of [0.9, 0.8, 0.5]) meter.add(Math.log(p));
  const c = meter.result();
  assert.ok(c);
  assert.ok(Math.abs(c.score - Math.cbrt(0.9 * 0.8 * 0.5)) < 1e-12);
  assert.equal(c.tokens, 3);
});

test("tokens without a log-probability are left out; none at all gives no score", () => {
  const meter = new ConfidenceMeter();
  meter.add(Number.NaN);
  assert.equal(meter.result(), undefined);
  assert.deepEqual(confidenceField(undefined), { gearbox: { confidence: null, mean_logprob: null, scored_tokens: 0 } });
  meter.add(Math.log(0.25));
  assert.equal(meter.result()?.score, 0.25);
});
