/** Seeded sampling: temperature, top-p and the PRNG. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { mulberry32, sampleToken } from "./llamacpp-sampling.ts";

const dist = new Map<number, number>([
  [10, 0.5],
  [11, 0.3],
  [12, 0.15],
  [13, 0.05],
  [14, 0],
]);

function frequencies(temperature: number, topP: number, draws = 20_000): Map<number, number> {
  const random = mulberry32(42);
  const counts = new Map<number, number>();
  for (let i = 0; i < draws; i++) {
    const t = sampleToken(dist, temperature, topP, random);
    counts.set(t, (counts.get(t) ?? 0) + 1);
  }
  return new Map([...counts].map(([t, c]) => [t, c / draws]));
}

test("mulberry32 is deterministic per seed and uniform in [0, 1)", () => {
  const a = mulberry32(7);
  const b = mulberry32(7);
  const xs = Array.from({ length: 10_000 }, () => a());
  assert.deepEqual(
    Array.from({ length: 10_000 }, () => b()),
    xs,
  );
  assert.ok(xs.every((x) => x >= 0 && x < 1));
  const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
  assert.ok(Math.abs(mean - 0.5) < 0.01);
  assert.notEqual(mulberry32(8)(), mulberry32(7)());
});

test("temperature 1 follows the distribution; a zero-probability token is never drawn", () => {
  const f = frequencies(1, 1);
  for (const [token, p] of dist) assert.ok(Math.abs((f.get(token) ?? 0) - p) < 0.015, `token ${token}: ${f.get(token)} vs ${p}`);
  assert.equal(f.get(14), undefined);
});

test("low temperature sharpens towards the top token, high flattens", () => {
  assert.ok((frequencies(0.1, 1).get(10) ?? 0) > 0.99);
  const hot = frequencies(10, 1);
  assert.ok((hot.get(13) ?? 0) > 0.15 && (hot.get(10) ?? 0) < 0.35);
});

test("top-p keeps the smallest head of the distribution reaching p", () => {
  const f = frequencies(1, 0.75); // 0.5 + 0.3 reaches 0.75
  assert.deepEqual([...f.keys()].sort(), [10, 11]);
  assert.ok(Math.abs((f.get(10) ?? 0) - 0.625) < 0.015);
  assert.deepEqual([...frequencies(1, 1e-9).keys()], [10]);
});
