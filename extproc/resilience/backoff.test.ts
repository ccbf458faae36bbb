import assert from "node:assert/strict";
import { test } from "node:test";
import { backoffMs } from "./backoff.ts";

const settings = { base_backoff_ms: 100, max_backoff_ms: 1000 };

test("full jitter under an exponential ceiling capped at max_backoff_ms", () => {
  const almostOne = () => 0.999999;
  assert.deepEqual(
    [1, 2, 3, 4, 5, 9].map((n) => backoffMs(settings, n, almostOne)),
    [99, 199, 399, 799, 999, 999],
  );
  assert.equal(
    backoffMs(settings, 3, () => 0),
    0,
  );
  assert.equal(
    backoffMs(settings, 2, () => 0.5),
    100,
  );
});

test("a provider's retry-after is a floor", () => {
  assert.equal(
    backoffMs(settings, 1, () => 0.5, 3000),
    3000,
  );
  assert.equal(
    backoffMs(settings, 5, () => 0.9, 10),
    900,
  );
});
