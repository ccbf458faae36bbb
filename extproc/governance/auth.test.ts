import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseConfigText } from "../config/load.ts";
import type { RawConfig } from "../config/schema.ts";
import type { GatewayError } from "../../common/errors.ts";
import type { Result } from "../../common/result.ts";
import { MemoryTenantStore } from "../store/memory-tenant-store.ts";
import { RedisTenantStore } from "../store/redis-tenant-store.ts";
import type { TenantStore } from "../store/tenant-store.ts";
import { testRedis } from "../store/test-redis.ts";
import { authenticate, authRequired, checkModel, createAuthDeps, presentedKey, takeQueryKey, type AuthDeps, type AuthRequest } from "./auth.ts";
import { generateKey } from "./keys.ts";
import type { Caller } from "./model.ts";

const CONFIG = `
tenants:
  - id: acme
    models: [gpt-4o-mini]
    ip_allowlist: [10.0.0.0/8, "2001:db8::/32"]
  - id: shop
    principals: ["spiffe://cluster.local/ns/shop/sa/web"]
  - id: open
`;

function config(text: string): RawConfig {
  const parsed = parseConfigText(text, "test.yaml");
  assert.ok(parsed.ok, parsed.ok ? "" : parsed.errors.join("\n"));
  return parsed.value;
}

function refused(result: Result<Caller, GatewayError>): GatewayError {
  assert.ok(!result.ok, "expected a refusal");
  const [error] = result.errors;
  assert.ok(error);
  return error;
}

function accepted(result: Result<Caller, GatewayError>): Caller {
  assert.ok(result.ok, result.ok ? "" : `refused: ${result.errors[0]?.message}`);
  return result.value;
}

const call = (headers: Record<string, string>, extra: Omit<AuthRequest, "headers"> = {}): AuthRequest => ({ headers, sourceAddress: "10.1.2.3", ...extra });

/** Runs `body` with a store of each kind (memory, and real Redis on its own prefix). */
const STORES: [string, () => Promise<{ store: TenantStore; close: () => Promise<void> }>][] = [
  ["memory", () => Promise.resolve({ store: new MemoryTenantStore(), close: () => Promise.resolve() })],
  [
    "redis",
    async () => {
      const r = await testRedis();
      return { store: new RedisTenantStore(r.redis, r.prefix), close: r.close };
    },
  ],
];

for (const [kind, open] of STORES) {
  describe(`authenticate (${kind} store)`, () => {
    const withDeps = (title: string, body: (deps: AuthDeps, store: TenantStore, clock: { now: number }) => Promise<void>, text = CONFIG): void => {
      test(title, async () => {
        const { store, close } = await open();
        const clock = { now: 1_000_000 };
        const deps = createAuthDeps(config(text), store, {}, { keys: { now: () => clock.now }, directory: { now: () => clock.now } });
        try {
          await body(deps, store, clock);
        } finally {
          await close();
        }
      });
    };

    const newKey = async (store: TenantStore, role: "call" | "admin", tenant = "acme") => {
      const made = generateKey({ role, tenant, name: "t", createdBy: "key_root" });
      await store.putKey(made.record);
      return made;
    };

    withDeps("a valid call key, from any of the three headers the SDKs send, is its tenant", async (deps, store) => {
      const { key, record } = await newKey(store, "call");
      const sent: Record<string, string>[] = [{ authorization: `Bearer ${key}` }, { "x-api-key": key }, { "api-key": key }];
      for (const headers of sent) {
        const caller = accepted(await authenticate(call(headers), deps));
        assert.equal(caller.via, "key");
        assert.equal(caller.tenant.id, "acme");
        assert.equal(caller.tenant.source, "config");
        assert.equal(caller.key?.id, record.id);
      }
    });

    withDeps("an unknown key is a 401 invalid_api_key that does not echo the key", async (deps) => {
      const forged = generateKey({ role: "call", tenant: "acme", name: "never stored", createdBy: "x" }).key;
      for (const key of [forged, "sk-proj-not-a-gearbox-key"]) {
        const error = refused(await authenticate(call({ authorization: `Bearer ${key}` }), deps));
        assert.equal(error.status, 401);
        assert.equal(error.code, "invalid_api_key");
        assert.ok(!error.message.includes(key) && !error.message.includes(key.slice(0, 12)));
      }
    });

    withDeps("a revoked key is refused once the cache's bound has passed, at once where the cache forgets it", async (deps, store, clock) => {
      const { key, record } = await newKey(store, "call");
      const request = call({ authorization: `Bearer ${key}` });
      accepted(await authenticate(request, deps));
      await store.revokeKey(record.id, new Date());
      // Revoked by another replica: this one may serve its cached lookup until the bound (5 s) passes.
      clock.now += 5_001;
      assert.equal(refused(await authenticate(request, deps)).code, "invalid_api_key");
      const other = await newKey(store, "call");
      const otherRequest = call({ "x-api-key": other.key });
      accepted(await authenticate(otherRequest, deps));
      await store.revokeKey(other.record.id, new Date());
      deps.keys.forget(other.record.hash);
      assert.equal(refused(await authenticate(otherRequest, deps)).status, 401, "revoked through this replica: immediate");
    });

    withDeps("an admin key cannot make model calls (403)", async (deps, store) => {
      const { key } = await newKey(store, "admin");
      const error = refused(await authenticate(call({ authorization: `Bearer ${key}` }), deps));
      assert.equal(error.status, 403);
      assert.equal(error.code, "admin_key_not_allowed");
    });

    withDeps("a call key whose tenant is gone is a 401", async (deps, store) => {
      const { key } = await newKey(store, "call", "deleted-tenant");
      assert.equal(refused(await authenticate(call({ authorization: `Bearer ${key}` }), deps)).code, "invalid_api_key");
    });

    withDeps("a bound workload identity is its tenant with no key; an unbound one is not", async (deps) => {
      const caller = accepted(await authenticate(call({}, { sourcePrincipal: "spiffe://cluster.local/ns/shop/sa/web" }), deps));
      assert.equal(caller.via, "principal");
      assert.equal(caller.tenant.id, "shop");
      assert.equal(caller.key, undefined);
      const error = refused(await authenticate(call({}, { sourcePrincipal: "spiffe://cluster.local/ns/other/sa/x" }), deps));
      assert.equal(error.status, 401);
      assert.equal(error.code, "missing_api_key");
    });

    withDeps("identities bound over the admin API are seen once the tenant snapshot refreshes", async (deps, store, clock) => {
      const principal = "spiffe://cluster.local/ns/pay/sa/api";
      assert.ok(!(await authenticate(call({}, { sourcePrincipal: principal }), deps)).ok);
      await store.putTenant({ id: "pay", principals: [principal], limits: {}, degrade_to_edge: false, source: "admin" });
      clock.now += 5_001;
      assert.equal(accepted(await authenticate(call({}, { sourcePrincipal: principal }), deps)).tenant.id, "pay");
    });

    withDeps("with keys required, no key and no identity is a 401; so is a non-Gearbox token", async (deps) => {
      assert.ok(deps.required);
      assert.equal(refused(await authenticate(call({}), deps)).code, "missing_api_key");
      assert.equal(refused(await authenticate(call({ authorization: "Bearer sk-openai-key" }), deps)).code, "invalid_api_key");
    });

    withDeps("an IP outside the tenant's allowlist is a 403 ip_not_allowed that names no range (IPv4 and IPv6)", async (deps, store) => {
      const { key } = await newKey(store, "call");
      const headers = { authorization: `Bearer ${key}` };
      for (const inside of ["10.9.8.7", "::ffff:10.9.8.7", "2001:db8:aa::1"]) accepted(await authenticate(call(headers, { sourceAddress: inside }), deps));
      for (const outside of ["192.168.1.1", "2001:db9::1", "::1"]) {
        const error = refused(await authenticate(call(headers, { sourceAddress: outside }), deps));
        assert.equal(error.status, 403);
        assert.equal(error.code, "ip_not_allowed");
        assert.ok(!/10\.0\.0\.0|2001:db8|acme/.test(error.message), error.message);
      }
      const { sourceAddress: _none, ...noAddress } = call(headers);
      assert.equal(refused(await authenticate(noAddress, deps)).code, "ip_not_allowed", "an unknown address fails closed");
    });

    withDeps("lookups are cached: one store read per key per bound, concurrent requests included", async (deps, store) => {
      const { key, record } = await newKey(store, "call", "open");
      let reads = 0;
      const counting: TenantStore = Object.create(store) as TenantStore;
      counting.keyByHash = (hash) => {
        reads++;
        return store.keyByHash(hash);
      };
      const cached = createAuthDeps(config(CONFIG), counting, {});
      const request = call({ authorization: `Bearer ${key}` });
      const callers = await Promise.all([1, 2, 3, 4].map(() => Promise.resolve(authenticate(request, cached))));
      for (const c of callers) assert.equal(accepted(c).key?.id, record.id);
      accepted(await authenticate(request, cached));
      assert.equal(reads, 1);
      accepted(await authenticate(request, deps));
    });
  });
}

describe("authenticate: keys not required (embedded defaults)", () => {
  const deps = (text = "") => createAuthDeps(config(text), new MemoryTenantStore(), {});

  test("no key → the anonymous tenant, unlimited", async () => {
    const caller = accepted(await authenticate(call({}), deps()));
    assert.equal(caller.via, "anonymous");
    assert.deepEqual(caller.tenant, { id: "default", limits: {}, degrade_to_edge: false, source: "config" });
  });

  test("a provider key an app still sends is not a claim; a Gearbox key is checked", async () => {
    const d = deps();
    assert.equal(accepted(await authenticate(call({ authorization: "Bearer sk-openai-key" }), d)).via, "anonymous");
    const forged = generateKey({ role: "call", tenant: "x", name: "n", createdBy: "x" }).key;
    assert.equal(refused(await authenticate(call({ authorization: `Bearer ${forged}` }), d)).status, 401);
  });

  test("a configured anonymous tenant applies with its limits and allowlists", async () => {
    const d = deps(
      "auth: { required: false, anonymous_tenant: guests }\ntenants:\n  - { id: guests, limits: { requests_per_second: 1 }, ip_allowlist: [127.0.0.1] }\n",
    );
    assert.deepEqual(accepted(await authenticate(call({}, { sourceAddress: "127.0.0.1" }), d)).tenant.limits, { requests_per_second: 1 });
    assert.equal(refused(await authenticate(call({}, { sourceAddress: "10.0.0.1" }), d)).code, "ip_not_allowed");
  });
});

test("authenticate: a store that fails makes a 503, never a pass", async () => {
  const broken = new MemoryTenantStore();
  broken.keyByHash = () => Promise.reject(new Error("redis down"));
  const d = createAuthDeps(config(CONFIG), broken, {});
  const key = generateKey({ role: "call", tenant: "acme", name: "n", createdBy: "x" }).key;
  const error = refused(await authenticate(call({ authorization: `Bearer ${key}` }), d));
  assert.equal(error.status, 503);
  assert.equal(error.code, "auth_unavailable");
});

test("authRequired: explicit setting, else on with tenants or a bootstrap admin key, off on embedded defaults", () => {
  assert.equal(authRequired(config(""), {}), false);
  assert.equal(authRequired(config("tenants: [{ id: a }]"), {}), true);
  assert.equal(authRequired(config(""), { GEARBOX_ADMIN_KEY: "x" }), true);
  assert.equal(authRequired(config("auth: { required: false }\ntenants: [{ id: a }]"), {}), false);
  assert.equal(authRequired(config("auth: { required: true }"), {}), true);
});

test("checkModel: the tenant's model allowlist; no list allows any model", () => {
  const limited: Caller = { tenant: { id: "acme", models: ["gpt-4o-mini"], limits: {}, degrade_to_edge: false, source: "config" }, via: "principal" };
  assert.ok(checkModel(limited, "gpt-4o-mini").ok);
  const denied = checkModel(limited, "gpt-4o");
  assert.ok(!denied.ok);
  assert.equal(denied.errors[0]?.status, 403);
  assert.equal(denied.errors[0]?.code, "model_not_allowed");
  assert.equal(denied.errors[0]?.param, "model");
  assert.ok(checkModel({ ...limited, tenant: { ...limited.tenant, models: undefined } }, "anything").ok);
});

test("presentedKey: Bearer first, then x-api-key, api-key, x-goog-api-key; blanks are no key", () => {
  assert.equal(presentedKey({ authorization: "Bearer a", "x-api-key": "b" }), "a");
  assert.equal(presentedKey({ authorization: "bearer  a " }), "a");
  assert.equal(presentedKey({ authorization: "Basic xyz", "x-api-key": "b" }), "b");
  assert.equal(presentedKey({ "api-key": "c" }), "c");
  assert.equal(presentedKey({ "x-goog-api-key": "d" }), "d");
  assert.equal(presentedKey({ "x-api-key": "b", "x-goog-api-key": "d" }), "b");
  assert.equal(presentedKey({ "x-api-key": "  " }), undefined);
  assert.equal(presentedKey({}), undefined);
});

/** A memory store whose reads fail while `down`. */
function failing(): { store: MemoryTenantStore; setDown: (down: boolean) => void } {
  const store = new MemoryTenantStore();
  let down = false;
  const keyByHash = store.keyByHash.bind(store);
  const listTenants = store.listTenants.bind(store);
  store.keyByHash = (hash) => (down ? Promise.reject(new Error("redis down")) : keyByHash(hash));
  store.listTenants = () => (down ? Promise.reject(new Error("redis down")) : listTenants());
  return { store, setDown: (d) => (down = d) };
}

describe("authenticate while the store fails (last good values)", () => {
  test("keys and tenants read before the outage still authenticate; a revoked one stays refused; a key never seen → 503", async () => {
    const { store, setDown } = failing();
    await store.putTenant({ id: "stored", limits: { requests_per_second: 7 }, degrade_to_edge: false, source: "admin" });
    const clock = { now: 0 };
    const d = createAuthDeps(
      config(CONFIG),
      store,
      {},
      { shared: { maxStaleMs: 60_000 }, keys: { now: () => clock.now }, directory: { now: () => clock.now } },
    );
    const live = generateKey({ role: "call", tenant: "stored", name: "n", createdBy: "x" });
    const revoked = generateKey({ role: "call", tenant: "acme", name: "n", createdBy: "x" });
    await store.putKey(live.record);
    await store.putKey({ ...revoked.record, revoked_at: new Date(0).toISOString() });
    assert.equal(accepted(await authenticate(call({ authorization: `Bearer ${live.key}` }), d)).tenant.limits.requests_per_second, 7);
    assert.equal(refused(await authenticate(call({ authorization: `Bearer ${revoked.key}` }), d)).status, 401);

    setDown(true);
    clock.now = 30_000;
    const during = accepted(await authenticate(call({ authorization: `Bearer ${live.key}` }), d));
    assert.equal(during.tenant.id, "stored", "the stored tenant comes from the last good snapshot");
    assert.equal(refused(await authenticate(call({ authorization: `Bearer ${revoked.key}` }), d)).status, 401);
    const never = generateKey({ role: "call", tenant: "stored", name: "n", createdBy: "x" });
    await store.putKey(never.record);
    assert.equal(refused(await authenticate(call({ authorization: `Bearer ${never.key}` }), d)).code, "auth_unavailable");

    clock.now = 60_001;
    assert.equal(
      refused(await authenticate(call({ authorization: `Bearer ${live.key}` }), d)).code,
      "auth_unavailable",
      "past max_stale the last good value is no longer trusted",
    );
    setDown(false);
    accepted(await authenticate(call({ authorization: `Bearer ${live.key}` }), d));
    accepted(await authenticate(call({ authorization: `Bearer ${never.key}` }), d));
  });

  test("a replica that never read the store: config tenants answer; a stored tenant's key or identity → 503, not 401", async () => {
    const { store, setDown } = failing();
    await store.putTenant({ id: "stored", principals: ["spiffe://c/ns/s/sa/w"], limits: {}, degrade_to_edge: false, source: "admin" });
    const onStored = generateKey({ role: "call", tenant: "stored", name: "n", createdBy: "x" });
    const onConfig = generateKey({ role: "call", tenant: "open", name: "n", createdBy: "x" });
    await store.putKey(onStored.record);
    await store.putKey(onConfig.record);
    const d = createAuthDeps(config(CONFIG), store, {});
    // Keys read while Redis answered; the tenants never were.
    await d.keys.lookup(onStored.record.hash);
    await d.keys.lookup(onConfig.record.hash);
    setDown(true);
    assert.equal(accepted(await authenticate(call({ authorization: `Bearer ${onConfig.key}` }), d)).tenant.id, "open");
    assert.equal(refused(await authenticate(call({ authorization: `Bearer ${onStored.key}` }), d)).code, "auth_unavailable");
    assert.equal(refused(await authenticate(call({}, { sourcePrincipal: "spiffe://c/ns/s/sa/w" }), d)).code, "auth_unavailable");
    assert.equal(
      accepted(await authenticate(call({}, { sourcePrincipal: "spiffe://cluster.local/ns/shop/sa/web" }), d)).tenant.id,
      "shop",
      "a config tenant's identity",
    );
    assert.equal(refused(await authenticate(call({}), d)).code, "missing_api_key", "no key at all is still 401");
  });
});

test("takeQueryKey: Google's ?key= leaves the query and becomes the presented key unless a header carries one", () => {
  const headers: Record<string, string> = {};
  assert.equal(takeQueryKey("?alt=sse&key=gbx_call_abc", headers), "?alt=sse");
  assert.equal(presentedKey(headers), "gbx_call_abc");
  const withHeader: Record<string, string> = { "x-api-key": "from-header" };
  assert.equal(takeQueryKey("?key=from-query", withHeader), "");
  assert.equal(presentedKey(withHeader), "from-header", "a header's key wins; the query's is still dropped");
  assert.equal(takeQueryKey("?key=a&key=b&x=1", {}), "?x=1", "every key parameter goes");
  assert.equal(takeQueryKey("?monkey=1", {}), "?monkey=1");
  assert.equal(takeQueryKey("?alt=sse", {}), "?alt=sse");
  const blank: Record<string, string> = {};
  assert.equal(takeQueryKey("?key=", blank), "");
  assert.equal(presentedKey(blank), undefined);
});
