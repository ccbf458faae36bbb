import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { parse } from "yaml";
import { parsePolicyConfig } from "../extproc/routing/policy/index.ts";
import { runCalibrate } from "./calibrate.ts";

const FIXTURES = fileURLToPath(new URL("../test/fixtures/routellm/", import.meta.url));

function io(): { out: string[]; err: string[]; io: Parameters<typeof runCalibrate>[1] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (t) => out.push(t), err: (t) => err.push(t), env: {} } };
}

test("calibrate a folder of RouteLLM files: a route: policy the config accepts, with its evidence", async () => {
  const c = io();
  assert.equal(await runCalibrate([FIXTURES, "--target-quality", "0.95", "--min-intent-rows", "0"], c.io), 0, c.err.join(""));
  const yaml = c.out.join("");
  assert.match(yaml, /^# gearbox calibrate /);
  assert.match(yaml, /# base threshold: 301 rows in 2 groups: edge share [\d.]+ %, quality [\d.]+ % \(lower bound [\d.]+ %\)/);
  const route = (parse(yaml) as { route: Record<string, unknown> }).route;
  const policy = parsePolicyConfig(route);
  assert.ok(policy.ok, policy.ok ? "" : policy.errors.join("; "));
  const evidence = (route.calibration as { evidence: { quality: number; quality_lower_bound: number; rows: number } }).evidence;
  assert.equal(evidence.rows, 301);
  assert.ok(evidence.quality >= evidence.quality_lower_bound && evidence.quality_lower_bound >= 0.95, JSON.stringify(evidence));
  // A looser target may only keep more on the edge.
  const loose = io();
  assert.equal(await runCalibrate([FIXTURES, "--target-quality", "0.8", "--min-intent-rows", "0"], loose.io), 0);
  const looseRoute = (parse(loose.out.join("")) as { route: { heuristic: { complexity_threshold: number } } }).route;
  assert.ok(looseRoute.heuristic.complexity_threshold > (route.heuristic as { complexity_threshold: number }).complexity_threshold);
});

test("--out writes the file; usage errors exit 2, bad data 1", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gearbox-calibrate-"));
  try {
    const c = io();
    const out = join(dir, "policy.yaml");
    assert.equal(await runCalibrate([join(FIXTURES, "mmlu_management.csv"), "--target-edge-share", "0.5", "--out", out], c.io), 0);
    assert.match(c.out.join(""), /103 rows → /);
    assert.doesNotMatch(readFileSync(out, "utf8"), /target_quality/);
    const none = io();
    assert.equal(await runCalibrate([], none.io), 2);
    assert.match(none.err.join(""), /^gearbox calibrate: no labelled file given/);
    const both = io();
    assert.equal(await runCalibrate([out, "--target-quality", "2"], both.io), 2);
    assert.match(both.err.join(""), /--target-quality: '2' is not a number from 0 to 1/);
    const bad = io();
    assert.equal(await runCalibrate([out], bad.io), 1);
    assert.match(bad.err.join(""), /no 'prompt' column/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
