import assert from "node:assert/strict";
import { test } from "node:test";
import { mulberry32 } from "../../../../edge-agent/engines/llamacpp-sampling.ts";
import { QualityEstimator, ThresholdHolder, type ThresholdChange } from "./estimator.ts";
import { cloudJudge, embeddingJudge, exactMatchJudge, normalizeAnswer } from "./judge.ts";
import { ShadowSampler } from "./sampler.ts";

test("sampler: a fraction of edge answers, at most max per tenant per minute", () => {
  const s = new ShadowSampler({ fraction: 1, maxPerMinute: 2 });
  assert.deepEqual(
    [0, 1, 2].map((k) => s.maybeShadow("a", k * 1000)),
    [true, true, false],
  );
  assert.equal(s.maybeShadow("b", 3000), true, "another tenant has its own budget");
  assert.equal(s.maybeShadow("a", 60_000), true, "a new minute, a new budget");
  const none = new ShadowSampler({ fraction: 0, maxPerMinute: 100 });
  assert.equal(none.maybeShadow("a", 0), false);
  const tenth = new ShadowSampler({ fraction: 0.1, maxPerMinute: 1e9, random: mulberry32(1) });
  for (let k = 0; k < 10_000; k++) tenth.maybeShadow("a", 0);
  assert.ok(Math.abs(tenth.stats.sampled - 1000) < 100, `${tenth.stats.sampled}`);
});

test("judges: exact match normalized, embedding similarity, cloud with a rubric; failures drop the sample", async () => {
  assert.equal(normalizeAnswer("  The answer is: B. "), "b");
  const input = (edgeAnswer: string, cloudAnswer: string) => ({ prompt: "p", edgeAnswer, cloudAnswer });
  assert.equal(await exactMatchJudge.grade(input("Answer: 42.", "42")), 1);
  assert.equal(await exactMatchJudge.grade(input("41", "42")), 0);
  const embed = (texts: string[]) => Promise.resolve(texts.map((t) => (t === "x" ? [1, 0] : [0.9, 0.1])));
  assert.equal(await embeddingJudge(embed, 0.9).grade(input("x", "y")), 1);
  assert.equal(await embeddingJudge(embed, 0.999).grade(input("x", "y")), 0);
  assert.equal(await embeddingJudge(() => Promise.reject(new Error("down"))).grade(input("x", "y")), undefined);
  let seen = "";
  const judge = cloudJudge((prompt) => {
    seen = prompt;
    return Promise.resolve("WORSE\nmisses the second part");
  });
  assert.equal(await judge.grade(input("a", "b")), 0);
  assert.match(seen, /SAME if answer A is as correct[\s\S]*<answer_a>\na\n<\/answer_a>/);
  assert.equal(await cloudJudge(() => Promise.resolve("SAME")).grade(input("a", "b")), 1);
  assert.equal(await cloudJudge(() => Promise.resolve("BETTER: B misreads the question")).grade(input("a", "b")), 2);
  assert.equal(await cloudJudge(() => Promise.resolve("I think so")).grade(input("a", "b")), undefined);
});

/** Scores uniform in 0–1; the edge loses the cloud's answer on every request scoring ≥ hardFrom. */
function drive(est: QualityEstimator, hardFrom: number, requests: number, seed = 1): ThresholdChange[] {
  const r = mulberry32(seed);
  const changes: ThresholdChange[] = [];
  for (let k = 0; k < requests; k++) {
    const score = r();
    est.observe(score);
    if (score < est.threshold) {
      const change = est.record(score, score >= hardFrom ? 0 : 1);
      if (change) changes.push(change);
    }
  }
  return changes;
}

test("estimator: too lossy moves down, too safe moves up, in between it holds (hysteresis); each move says why", () => {
  // Edge loses above 0.5: quality(t) = 1 − max(0, t − 0.5); target 0.95 → t ≈ 0.55.
  const audit: ThresholdChange[] = [];
  const high = new QualityEstimator({ target: 0.95, initialThreshold: 0.9, minSamples: 200, onChange: (c) => audit.push(c) });
  const down = drive(high, 0.5, 20_000);
  assert.ok(down.length > 0 && down[0]?.direction === "down");
  assert.ok(high.threshold > 0.5 && high.threshold < 0.56, `threshold ${high.threshold}`);
  assert.equal(audit.length, down.length);
  assert.match(down[0]?.reason ?? "", /^calibrated:q=0\.\d+\[0\.\d+,0\.\d+\]<0\.95$/);
  const low = new QualityEstimator({ target: 0.95, initialThreshold: 0.2, minSamples: 200 });
  const up = drive(low, 0.5, 20_000);
  assert.equal(up[0]?.direction, "up");
  assert.ok(low.threshold > 0.45 && low.threshold < 0.56, `threshold ${low.threshold}`);
  const settled = new QualityEstimator({ target: 0.95, initialThreshold: 0.53, minSamples: 200, hysteresis: 0.05 });
  assert.deepEqual(drive(settled, 0.5, 5_000), [], "inside the band: no move");
});

test("holder: one estimator per tenant and intent; current() feeds PolicyInput.calibratedThreshold", () => {
  const holder = new ThresholdHolder(() => new QualityEstimator({ target: 0.95, initialThreshold: 0.07 }));
  assert.equal(holder.current("acme", "qa"), undefined);
  holder.estimator("acme", "qa").observe(0.01);
  assert.deepEqual(holder.current("acme", "qa"), { threshold: 0.07, source: "calibrated:initial=0.07" });
  assert.equal(holder.current("acme", "math"), undefined);
  assert.equal(holder.snapshot()[0]?.stats.observed, 1);
});

test("estimator: an edge answer better than the cloud's (grade 2) offsets a loss", () => {
  const est = new QualityEstimator({ target: 0.95, initialThreshold: 0.5, minSamples: 1_000_000 });
  for (let k = 0; k < 1000; k++) est.observe(k / 2000);
  for (let k = 0; k < 400; k++) est.record(k / 1000, k % 4 === 0 ? 0 : 1);
  const lossesOnly = est.estimate().quality;
  for (let k = 0; k < 400; k++) est.record(k / 1000, k % 4 === 0 ? 2 : 1);
  assert.ok(lossesOnly < 0.8, `${lossesOnly}`);
  assert.ok(Math.abs(est.estimate().quality - 1) < 0.02, `as many wins as losses: ${est.estimate().quality}`);
});

test("estimator: the loss is stratified by score, so samples piled up under an earlier, lower threshold do not hide the hard prompts", () => {
  // Scores uniform in 0-1; the edge loses every prompt scoring 0.4 or more; the threshold is 0.5.
  const est = new QualityEstimator({ target: 0.95, initialThreshold: 0.5, minSamples: 1_000_000 });
  const r = mulberry32(3);
  for (let k = 0; k < 5000; k++) est.observe(r());
  // 900 samples from when the threshold was 0.3 (all clean), 100 since it is 0.5.
  for (let k = 0; k < 900; k++) est.record(r() * 0.3, 1);
  for (let k = 0; k < 100; k++) {
    const s = r() * 0.5;
    est.record(s, s >= 0.4 ? 0 : 1);
  }
  // True quality at 0.5: 1 − 0.1 (the share lost). Pooled, the 1000 samples would say ≈ 0.98.
  const e = est.estimate();
  assert.ok(Math.abs(e.quality - 0.9) < 0.03, `stratified ${e.quality}`);
  assert.ok(e.lower < 0.9 && e.upper > 0.9);
});

test("estimator: the step halves at each reversal, so the threshold brackets its target instead of hopping across it", () => {
  const est = new QualityEstimator({ target: 0.95, initialThreshold: 0.9, minSamples: 200, shareStep: 0.08, minShareStep: 0.01 });
  const changes = drive(est, 0.5, 200_000, 7);
  const sizes = changes.map((c) => Math.abs(c.to - c.from));
  const reversals = changes.filter((c, i) => i > 0 && c.direction !== changes[i - 1]?.direction).length;
  assert.ok(reversals >= 1, "it overshoots at least once with a step this large");
  assert.ok((sizes.at(-1) ?? 1) < (sizes[0] ?? 0) / 2, `${sizes.join(",")}`);
  assert.ok(est.threshold > 0.5 && est.threshold < 0.56, `threshold ${est.threshold}`);
});
