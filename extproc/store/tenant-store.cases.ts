/**
 * The one suite every `TenantStore` passes (run by `memory-tenant-store.test.ts` and
 * `redis-tenant-store.test.ts`). `open` gives a fresh, empty store, a text dump of everything it
 * holds (to prove no key is stored in plain text) and a way to close it. No case is skipped.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { generateKey } from "../governance/keys.ts";
import type { ApiKeyRecord, Tenant } from "../governance/model.ts";
import type { TenantStore } from "./tenant-store.ts";

export interface OpenedStore {
  store: TenantStore;
  dump: () => Promise<string>;
  close: () => Promise<void>;
}

const tenant = (id: string, extra: Partial<Tenant> = {}): Tenant => ({ id, limits: {}, degrade_to_edge: false, source: "admin", ...extra });

function key(role: "call" | "admin", tenantId: string | undefined, at: string): { key: string; record: ApiKeyRecord } {
  return generateKey(
    { role, ...(tenantId !== undefined && { tenant: tenantId }), name: `${role} ${tenantId ?? "global"}`, createdBy: "key_root" },
    new Date(at),
  );
}

export function tenantStoreCases(name: string, open: () => Promise<OpenedStore>): void {
  const withStore = (title: string, body: (s: OpenedStore) => Promise<void>): void => {
    test(title, async () => {
      const opened = await open();
      try {
        await body(opened);
      } finally {
        await opened.close();
      }
    });
  };

  describe(`TenantStore: ${name}`, () => {
    withStore("tenants: put, get, replace, list by id, delete", async ({ store }) => {
      assert.equal(await store.getTenant("acme"), undefined);
      const acme = tenant("acme", {
        models: ["gpt-4o"],
        limits: { requests_per_second: 5 },
        ip_allowlist: ["10.0.0.0/8", "2001:db8::/32"],
        principals: ["spiffe://cluster.local/ns/shop/sa/web"],
        alert_at: [0.5, 0.9],
      });
      await store.putTenant(acme);
      await store.putTenant(tenant("beta"));
      assert.deepEqual(await store.getTenant("acme"), acme);
      await store.putTenant({ ...acme, models: ["gpt-4o-mini"] });
      assert.deepEqual((await store.getTenant("acme"))?.models, ["gpt-4o-mini"]);
      assert.deepEqual(
        (await store.listTenants()).map((t) => t.id),
        ["acme", "beta"],
      );
      assert.equal(await store.deleteTenant("acme"), true);
      assert.equal(await store.deleteTenant("acme"), false, "a second delete finds nothing");
      assert.equal(await store.getTenant("acme"), undefined);
      assert.deepEqual(
        (await store.listTenants()).map((t) => t.id),
        ["beta"],
      );
    });

    withStore("records come out as copies: changing one changes nothing stored", async ({ store }) => {
      await store.putTenant(tenant("acme", { models: ["a"] }));
      const read = await store.getTenant("acme");
      assert.ok(read);
      (read.models as string[]).push("b");
      assert.deepEqual((await store.getTenant("acme"))?.models, ["a"]);
      const { record } = key("call", "acme", "2025-01-01T00:00:00Z");
      await store.putKey(record);
      const got = await store.keyByHash(record.hash);
      assert.ok(got);
      got.revoked_at = "now";
      assert.equal((await store.keyByHash(record.hash))?.revoked_at, undefined);
    });

    withStore("keys: found by hash and by id; unknown ones are not", async ({ store }) => {
      const { record } = key("call", "acme", "2025-01-01T00:00:00Z");
      await store.putKey(record);
      assert.deepEqual(await store.keyByHash(record.hash), record);
      assert.deepEqual(await store.getKey(record.id), record);
      assert.equal(await store.keyByHash("0".repeat(64)), undefined);
      assert.equal(await store.getKey("key_0000000000000000"), undefined);
    });

    withStore("keys: listed in creation order, all or one tenant's", async ({ store }) => {
      const late = key("call", "acme", "2025-01-03T00:00:00Z").record;
      const early = key("call", "acme", "2025-01-01T00:00:00Z").record;
      const admin = key("admin", undefined, "2025-01-02T00:00:00Z").record;
      const other = key("call", "beta", "2025-01-04T00:00:00Z").record;
      for (const r of [late, early, admin, other]) await store.putKey(r);
      assert.deepEqual(
        (await store.listKeys()).map((k) => k.id),
        [early.id, admin.id, late.id, other.id],
      );
      assert.deepEqual(
        (await store.listKeys("acme")).map((k) => k.id),
        [early.id, late.id],
      );
      assert.deepEqual(await store.listKeys("nobody"), []);
    });

    withStore("revoke: stamps revoked_at once; the record stays findable; unknown ids are undefined", async ({ store }) => {
      const { record } = key("call", "acme", "2025-01-01T00:00:00Z");
      await store.putKey(record);
      const first = await store.revokeKey(record.id, new Date("2025-02-01T00:00:00Z"));
      assert.equal(first?.revoked_at, "2025-02-01T00:00:00.000Z");
      const again = await store.revokeKey(record.id, new Date("2025-03-01T00:00:00Z"));
      assert.equal(again?.revoked_at, "2025-02-01T00:00:00.000Z", "the first revocation time stands");
      assert.equal((await store.keyByHash(record.hash))?.revoked_at, "2025-02-01T00:00:00.000Z");
      assert.equal((await store.listKeys("acme"))[0]?.revoked_at, "2025-02-01T00:00:00.000Z");
      assert.equal(await store.revokeKey("key_0000000000000000", new Date()), undefined);
    });

    withStore("no key is ever stored in plain text, nor its secret part", async ({ store, dump }) => {
      const made = [key("call", "acme", "2025-01-01T00:00:00Z"), key("admin", undefined, "2025-01-01T00:00:00Z"), key("admin", "acme", "2025-01-01T00:00:00Z")];
      await store.putTenant(tenant("acme"));
      for (const { record } of made) await store.putKey(record);
      await store.revokeKey(made[0]?.record.id ?? "", new Date());
      const everything = await dump();
      for (const { key: plain, record } of made) {
        assert.ok(everything.includes(record.hash), "the dump does show the records");
        assert.ok(!everything.includes(plain), "no whole key");
        assert.ok(!everything.includes(plain.slice(record.prefix.length, record.prefix.length + 16)), "no part of the secret beyond the prefix");
      }
    });
  });
}
