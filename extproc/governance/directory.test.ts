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

test("TenantDirectory: a failed store read is not cached", async () => {
  const store = new MemoryTenantStore();
  const real = store.listTenants.bind(store);
  let fail = true;
  store.listTenants = () => (fail ? Promise.reject(new Error("down")) : real());
  const directory = new TenantDirectory([], store);
  await assert.rejects(directory.snapshot(), /down/);
  fail = false;
  assert.equal((await directory.snapshot()).byId.size, 0);
});
