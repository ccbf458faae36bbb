import assert from "node:assert/strict";
import { test } from "node:test";
import { generateKey } from "../governance/keys.ts";
import { RedisTenantStore } from "./redis-tenant-store.ts";
import { tenantStoreCases } from "./tenant-store.cases.ts";
import { testRedis } from "./test-redis.ts";

tenantStoreCases("redis", async () => {
  const r = await testRedis();
  return { store: new RedisTenantStore(r.redis, r.prefix), dump: r.dump, close: r.close };
});

test("redis: a tenant's own data carries its Cluster hash tag; the indexes are global", async () => {
  const r = await testRedis();
  try {
    const store = new RedisTenantStore(r.redis, r.prefix);
    await store.putTenant({ id: "acme", limits: {}, degrade_to_edge: false, source: "admin" });
    const { record } = generateKey({ role: "call", tenant: "acme", name: "svc", createdBy: "key_root" });
    await store.putKey(record);
    const names = (await r.redis.keys(`${r.prefix}*`)).map((k) => k.slice(r.prefix.length)).sort();
    assert.deepEqual(names, [`key:${record.hash}`, "keys", "tenants", "{t:acme}:keys", "{t:acme}:tenant"]);
  } finally {
    await r.close();
  }
});

test("redis: a prefix with a brace is refused (it would become the hash tag)", async () => {
  const r = await testRedis();
  try {
    assert.throws(() => new RedisTenantStore(r.redis, "gbx:{x}:"), /must not contain '\{'/);
  } finally {
    await r.close();
  }
});

test("redis: a record whose index entry outlived it is skipped, not returned broken", async () => {
  const r = await testRedis();
  try {
    const store = new RedisTenantStore(r.redis, r.prefix);
    await store.putTenant({ id: "acme", limits: {}, degrade_to_edge: false, source: "admin" });
    await r.redis.sadd(`${r.prefix}tenants`, "ghost");
    assert.deepEqual(
      (await store.listTenants()).map((t) => t.id),
      ["acme"],
    );
  } finally {
    await r.close();
  }
});
