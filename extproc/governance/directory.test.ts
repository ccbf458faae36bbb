import assert from "node:assert/strict";
import { test } from "node:test";
import { MemoryTenantStore } from "../store/memory-tenant-store.ts";
import { TenantDirectory } from "./directory.ts";
import type { Tenant } from "./model.ts";

const stored = (id: string, extra: Partial<Tenant> = {}): Tenant => ({ id, limits: {}, degrade_to_edge: false, source: "admin", ...extra });

test("TenantDirectory: config tenants first and read-only; a stored tenant with a config id is shadowed", async () => {
  const store = new MemoryTenantStore();
  await store.putTenant(stored("acme", { models: ["from-store"] }));
  await store.putTenant(stored("beta", { principals: ["spiffe://x/ns/a/sa/b", "spiffe://x/ns/shared/sa/s"] }));
  const directory = new TenantDirectory([{ id: "acme", limits: {}, degrade_to_edge: false, principals: ["spiffe://x/ns/shared/sa/s"] }], store);
  const { byId, byPrincipal } = await directory.snapshot();
  assert.deepEqual([...byId.keys()], ["acme", "beta"]);
  assert.equal(byId.get("acme")?.source, "config");
  assert.equal(byId.get("acme")?.models, undefined, "the config's acme, not the store's");
  assert.equal(byPrincipal.get("spiffe://x/ns/shared/sa/s")?.id, "acme", "the first tenant to claim an identity keeps it");
  assert.equal(byPrincipal.get("spiffe://x/ns/a/sa/b")?.id, "beta");
  assert.ok(directory.configTenant("acme"));
  assert.equal(directory.configTenant("beta"), undefined);
});

test("TenantDirectory: a snapshot lives for the TTL, invalidate and maxAge 0 read the store again", async () => {
  const store = new MemoryTenantStore();
  const clock = { now: 0 };
  const directory = new TenantDirectory([], store, { ttlMs: 5_000, now: () => clock.now });
  assert.equal((await directory.snapshot()).byId.size, 0);
  await store.putTenant(stored("late"));
  assert.equal((await directory.snapshot()).byId.size, 0, "cached");
  assert.equal((await directory.snapshot(0)).byId.size, 1, "maxAge 0 is fresh");
  await store.deleteTenant("late");
  directory.invalidate();
  assert.equal((await directory.snapshot()).byId.size, 0);
  await store.putTenant(stored("later"));
  clock.now = 5_000;
  assert.ok((await directory.snapshot()).byId.has("later"));
});

test("TenantDirectory: a failed first read gives the config tenants alone, marked partial, and is not kept", async () => {
  const store = new MemoryTenantStore();
  await store.putTenant(stored("late"));
  const real = store.listTenants.bind(store);
  let fail = true;
  store.listTenants = () => (fail ? Promise.reject(new Error("down")) : real());
  const directory = new TenantDirectory([{ id: "cfg", limits: {}, degrade_to_edge: false }], store);
  const partial = await directory.snapshot();
  assert.deepEqual([...partial.byId.keys()], ["cfg"]);
  assert.equal(partial.partial, true);
  await assert.rejects(directory.snapshot(0), /down/, "the admin API's fresh read says the store failed");
  fail = false;
  const full = await directory.snapshot();
  assert.deepEqual([...full.byId.keys()], ["cfg", "late"]);
  assert.equal(full.partial, undefined);
});

test("TenantDirectory: the store failing after a read: the last good snapshot, until max_stale", async () => {
  const store = new MemoryTenantStore();
  await store.putTenant(stored("kept", { limits: { requests_per_second: 5 } }));
  const real = store.listTenants.bind(store);
  let fail = false;
  let reads = 0;
  store.listTenants = () => (reads++, fail ? Promise.reject(new Error("down")) : real());
  const clock = { now: 0 };
  const directory = new TenantDirectory([], store, { ttlMs: 5_000, maxStaleMs: 60_000, now: () => clock.now });
  await directory.snapshot();
  fail = true;
  clock.now = 10_000;
  const during = await directory.snapshot();
  assert.equal(during.byId.get("kept")?.limits.requests_per_second, 5);
  assert.equal(during.partial, undefined);
  const readsDuring = reads;
  for (let i = 0; i < 20; i++) await directory.snapshot();
  assert.equal(reads, readsDuring, "no store read per lookup while it fails");
  clock.now = 60_001;
  assert.equal((await directory.snapshot()).partial, true, "too old: the config tenants alone");
});
