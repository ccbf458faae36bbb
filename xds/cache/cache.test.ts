import assert from "node:assert/strict";
import { test } from "node:test";
import { snapshotOf } from "../../test/xds/ads-fixtures.ts";
import { routingPolicyResource } from "../resources/gearbox.ts";
import { DEFAULT_GROUP, SnapshotCache } from "./cache.ts";
import type { Snapshot } from "./snapshot.ts";
import { compareVersions } from "./version.ts";

function policy(tag: string): Snapshot {
  return snapshotOf([routingPolicyResource("default", { tag })]);
}

test("groupOf picks the node's cluster when it has a snapshot, else the default group", () => {
  const cache = new SnapshotCache();
  cache.setSnapshot("gearbox-extproc", policy("extproc"));
  assert.equal(cache.groupOf({ id: "a", cluster: "gearbox-extproc" }), "gearbox-extproc");
  assert.equal(cache.groupOf({ id: "b", cluster: "unknown" }), DEFAULT_GROUP);
  assert.equal(cache.groupOf({ id: "c" }), DEFAULT_GROUP);
  assert.equal(cache.groupOf(undefined), DEFAULT_GROUP);
});

test("a watch sees every new snapshot of its group, and nothing after it ends", () => {
  const cache = new SnapshotCache();
  const seen: string[] = [];
  const stop = cache.watch({ cluster: "g" }, (s) => seen.push(s.version));
  const first = cache.setSnapshot("g", policy("1"));
  cache.setSnapshot("other", policy("x"));
  const second = cache.setSnapshot("g", policy("2"));
  stop();
  cache.setSnapshot("g", policy("3"));
  assert.deepEqual(seen, [first.version, second.version]);
  assert.equal(cache.watchCount(), 0);
});

test("a group without a snapshot follows the default group, until it gets its own", () => {
  const cache = new SnapshotCache();
  const seen: string[] = [];
  cache.watch({ cluster: "late" }, (s) => seen.push(s.version));
  const fallback = cache.setSnapshot(DEFAULT_GROUP, policy("default"));
  const own = cache.setSnapshot("late", policy("own"));
  cache.setSnapshot(DEFAULT_GROUP, policy("default 2"));
  assert.deepEqual(seen, [fallback.version, own.version]);
});

test("a snapshot whose version is not above the group's current one is re-issued under a higher version", () => {
  const cache = new SnapshotCache();
  const older = policy("older");
  const newer = policy("newer");
  cache.setSnapshot("g", newer);
  const stored = cache.setSnapshot("g", older);
  assert.notEqual(stored.version, older.version);
  assert.equal(compareVersions(stored.version, newer.version), 1);
  assert.equal(stored.resources, older.resources);
  assert.equal(cache.getSnapshot("g"), stored);
  assert.equal(cache.setSnapshot("g", stored), stored, "setting the current snapshot again changes nothing");
});

test("advancePast re-issues the current snapshot above a version a client reports, and notifies", () => {
  const cache = new SnapshotCache();
  const current = cache.setSnapshot("g", policy("x"));
  const seen: string[] = [];
  cache.watch({ cluster: "g" }, (s) => seen.push(s.version));
  const reported = `${String(Date.now() + 86_400_000).padStart(15, "0")}-000000`;
  const reissued = cache.advancePast("g", reported);
  assert.ok(reissued);
  assert.equal(compareVersions(reissued.version, reported), 1);
  assert.equal(reissued.resources, current.resources);
  assert.deepEqual(seen, [reissued.version]);
  assert.equal(cache.advancePast("none", reported), undefined);
});
