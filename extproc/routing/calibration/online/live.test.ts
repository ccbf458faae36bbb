import assert from "node:assert/strict";
import { test } from "node:test";
import { OnlineCalibration, type CalibrationRoute } from "./online.ts";

const route = (over: Partial<CalibrationRoute> = {}, online: Partial<NonNullable<CalibrationRoute["calibration"]>["online"]> = {}): CalibrationRoute => ({
  target_quality: 0.95,
  heuristic: { complexity_threshold: 0.2, intent_thresholds: { math: 0.05 } },
  calibration: {
    cloud_quality: 1,
    online: { enable: true, shadow_fraction: 1, max_per_minute: 10, judge: "exact", min_samples: 2, hysteresis: 0.01, ...online },
  },
  ...over,
});

test("no target or online off: no calibrated threshold (the configured ones apply)", () => {
  const c = new OnlineCalibration();
  assert.equal(c.threshold(route({ target_quality: undefined }), "t", "qa", 0.1), undefined);
  assert.equal(c.threshold(route({}, { enable: false }), "t", "qa", 0.1), undefined);
  assert.equal(c.threshold(route({ calibration: undefined }), "t", "qa", 0.1), undefined);
});

test("the held threshold starts at the intent's configured one; judged losses move it down; a push with other settings starts again", async () => {
  const c = new OnlineCalibration({ now: () => 0 });
  assert.deepEqual(c.threshold(route(), "t", "math", 0.01), { tenant: "t", intent: "math", score: 0.01, threshold: 0.05, source: "calibrated:initial=0.05" });
  const tag = c.threshold(route(), "t", "qa", 0.1);
  assert.equal(tag?.threshold, 0.2);
  if (!tag) return;
  for (let k = 0; k < 3; k++)
    assert.equal(
      c.kept(
        tag,
        route(),
        [{ role: "user", content: "2+2?" }],
        "5",
        () => Promise.resolve("4"),
        () => Promise.reject(new Error("unused")),
      ),
      true,
    );
  await c.settled();
  assert.equal(c.stats.judged, 3);
  assert.equal(c.stats.movesDown, 1);
  const moved = c.threshold(route(), "t", "qa", 0.1);
  assert.ok(moved && moved.threshold < 0.2 && moved.source.startsWith("calibrated:q="), JSON.stringify(moved));
  assert.equal(c.threshold(route({ target_quality: 0.9 }), "t", "qa", 0.1)?.threshold, 0.2, "a new target: the estimators start again");
});

test("a failing shadow call or judge drops the sample; the budget is per tenant", async () => {
  const c = new OnlineCalibration({ now: () => 0 });
  const r = route({}, { judge: "cloud", max_per_minute: 1 });
  const tag = c.threshold(r, "t", "qa", 0.1);
  if (!tag) return assert.fail("no tag");
  const msgs = [{ role: "user" as const, content: "q" }];
  assert.equal(
    c.kept(
      tag,
      r,
      msgs,
      "a",
      () => Promise.reject(new Error("503")),
      () => Promise.resolve("SAME"),
    ),
    true,
  );
  assert.equal(
    c.kept(
      tag,
      r,
      msgs,
      "a",
      () => Promise.resolve("b"),
      () => Promise.resolve("SAME"),
    ),
    false,
    "over the tenant's budget",
  );
  const other = c.threshold(r, "u", "qa", 0.1);
  if (!other) return assert.fail("no tag");
  assert.equal(
    c.kept(
      other,
      r,
      msgs,
      "a",
      () => Promise.resolve("b"),
      () => Promise.resolve("no verdict"),
    ),
    true,
    "another tenant's budget",
  );
  await c.settled();
  assert.deepEqual([c.stats.shadowFailed, c.stats.judgeDropped, c.stats.judged, c.stats.overBudget], [1, 1, 0, 1]);
});

test("the embedding judge grades with the embedder it is given, and drops the sample without one", async () => {
  const r = route({}, { judge: "embedding" });
  const msgs = [{ role: "user" as const, content: "q" }];
  const without = new OnlineCalibration({ now: () => 0 });
  const t1 = without.threshold(r, "t", "qa", 0.1);
  if (!t1) return assert.fail("no tag");
  without.kept(
    t1,
    r,
    msgs,
    "a",
    () => Promise.resolve("b"),
    () => Promise.reject(new Error("unused")),
  );
  await without.settled();
  assert.deepEqual([without.stats.judgeDropped, without.stats.judged], [1, 0]);
  const withEmbedder = new OnlineCalibration({ now: () => 0 });
  withEmbedder.embed = (texts) => Promise.resolve(texts.map((t) => (t === "a" ? [1, 0] : [0, 1])));
  const t2 = withEmbedder.threshold(r, "t", "qa", 0.1);
  if (!t2) return assert.fail("no tag");
  for (let k = 0; k < 2; k++)
    withEmbedder.kept(
      t2,
      r,
      msgs,
      "a",
      () => Promise.resolve("b"),
      () => Promise.reject(new Error("unused")),
    );
  await withEmbedder.settled();
  assert.equal(withEmbedder.stats.judged, 2);
  assert.equal(withEmbedder.stats.movesDown, 1, "orthogonal answers: two losses, a move down");
});
