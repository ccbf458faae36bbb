import assert from "node:assert/strict";
import { test } from "node:test";
import { compareVersions, nextVersion, observeVersion } from "./version.ts";

test("versions are fixed-width wall-clock stamps that only grow, even when the clock steps back", () => {
  const now = Date.now() + 60_000;
  const a = nextVersion(now);
  const b = nextVersion(now);
  const c = nextVersion(now - 30_000);
  assert.match(a, /^\d{15}-\d{6}$/);
  assert.equal(a.slice(0, 15), String(now).padStart(15, "0"));
  assert.ok(a < b && b < c, `${a} < ${b} < ${c}`);
  assert.equal(compareVersions(a, c), -1);
});

test("a later process (a later clock) issues higher versions with no state kept", () => {
  const earlier = `${String(Date.now() - 3_600_000).padStart(15, "0")}-000042`;
  assert.equal(compareVersions(nextVersion(), earlier), 1);
});

test("observing a version ahead of the clock moves the clock past it", () => {
  const ahead = `${String(Date.now() + 3_600_000).padStart(15, "0")}-000007`;
  observeVersion(ahead);
  assert.equal(compareVersions(nextVersion(), ahead), 1);
});

test("versions in another format are not ordered", () => {
  assert.equal(compareVersions("v2", nextVersion()), undefined);
  assert.equal(compareVersions(nextVersion(), "1"), undefined);
});
