import assert from "node:assert/strict";
import { test } from "node:test";
import { evaluateThreshold, fitThreshold, normalQuantile, thresholdForShare, type LabelledPoint } from "./fit.ts";

/** n points per group; the edge is wrong on a point when its score is at or above `hardFrom` (the cloud always right). */
function data(groups: number, n: number, hardFrom: (g: number) => number): LabelledPoint[] {
  const out: LabelledPoint[] = [];
  for (let g = 0; g < groups; g++) {
    for (let i = 0; i < n; i++) {
      const score = (i + 0.5) / n;
      out.push({ score, edge: score >= hardFrom(g) ? 0 : 1, cloud: 1, group: `g${g}` });
    }
  }
  return out;
}

test("normal quantiles", () => {
  assert.ok(Math.abs(normalQuantile(0.95) - 1.6449) < 1e-4);
  assert.ok(Math.abs(normalQuantile(0.5)) < 1e-9);
  assert.ok(Math.abs(normalQuantile(0.01) + 2.3263) < 1e-4);
});

test("the point estimate (confidence 0.5) fits the exact 95 % point; the bound keeps less on the edge", () => {
  // Edge wrong above 0.5 everywhere: edge share s loses max(0, s − 0.5); 95 % → s = 0.55.
  const points = data(10, 100, () => 0.5);
  const point = fitThreshold(points, { targetQuality: 0.95, confidence: 0.5 });
  assert.ok(Math.abs(point.edgeShare - 0.55) < 0.011, `edge share ${point.edgeShare}`);
  assert.ok(point.quality >= 0.95 - 1e-9);
  const bound = fitThreshold(points, { targetQuality: 0.95, confidence: 0.95 });
  assert.ok(bound.edgeShare < point.edgeShare, `${bound.edgeShare} < ${point.edgeShare}`);
  assert.ok(bound.qualityLower >= 0.95 - 1e-9 && bound.quality > bound.qualityLower);
});

test("groups that disagree widen the bound: clustered error beats the row-wise one", () => {
  const same = data(10, 100, () => 0.5);
  const spread = data(10, 100, (g) => 0.3 + 0.04 * g); // the same 0.48 on average, but varying by group
  const a = fitThreshold(same, { targetQuality: 0.95 });
  const b = fitThreshold(spread, { targetQuality: 0.95 });
  const bPoint = fitThreshold(spread, { targetQuality: 0.95, confidence: 0.5 });
  assert.ok(bPoint.edgeShare - b.edgeShare > a.edgeShare - fitThreshold(same, { targetQuality: 0.95, confidence: 0.5 }).edgeShare);
});

test("an edge that is never worse goes to the edge entirely; one always worse stays in the cloud", () => {
  const good = data(4, 50, () => 2);
  assert.equal(fitThreshold(good, { targetQuality: 0.95 }).edgeShare, 1);
  const bad = data(4, 50, () => 0).map((p) => ({ ...p, score: 0.5 }));
  const fit = fitThreshold(bad, { targetQuality: 0.95 });
  assert.equal(fit.edgeShare, 0);
  assert.equal(fit.threshold, 0);
});

test("a target edge share and a given threshold are evaluated with their bound", () => {
  const points = data(10, 100, () => 0.5);
  const at = thresholdForShare(points, 0.4);
  assert.ok(Math.abs(at.edgeShare - 0.4) < 0.011);
  assert.equal(at.quality, 1);
  const over = evaluateThreshold(points, 0.7);
  assert.ok(Math.abs(over.quality - 0.8) < 1e-9, `quality ${over.quality}`);
  assert.ok(over.qualityLower < over.quality);
});
