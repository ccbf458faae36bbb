import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { parseConfigText } from "../config/load.ts";
import { authenticate, createAuthDeps, type AuthDeps } from "../governance/auth.ts";
import { RedisAuditLog } from "../store/redis-audit-log.ts";
import { RedisTenantStore } from "../store/redis-tenant-store.ts";
import { testRedis, type TestRedis } from "../store/test-redis.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import type { ThrottledCaller } from "./deps.ts";
import { startAdminServer, type AdminServer } from "./server.ts";

const CONFIG = `
tenants:
  - { id: acme, models: [gpt-4o-mini] }
`;
const BOOTSTRAP = randomBytes(32).toString("base64url");
const THROTTLED: ThrottledCaller[] = [
  { tenant: "acme", limit: "requests_per_second", until: "2025-01-01T00:00:01.000Z" },
  { tenant: "team", key: "key_1", limit: "tokens_per_minute", detail: "1200/1000" },
];

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown> & { error?: { message: string; type: string; code: string | null; param: string | null }; data?: Record<string, unknown>[] };
}

let redis: TestRedis;
let server: AdminServer;
let auth: AuthDeps;
let store: RedisTenantStore;
let audit: RedisAuditLog;

async function api(method: string, path: string, key?: string, body?: unknown): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (key !== undefined) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`http://127.0.0.1:${server.port}${path}`, {
    method,
    headers,
    ...(body !== undefined && { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Answer["body"] };
}

const root = (method: string, path: string, body?: unknown) => api(method, path, BOOTSTRAP, body);

async function createKey(spec: Record<string, unknown>, by = BOOTSTRAP): Promise<{ key: string; id: string }> {
  const made = await api("POST", "/v1/keys", by, spec);
  assert.equal(made.status, 201, JSON.stringify(made.body));
  return { key: String(made.body.key), id: String(made.body.id) };
}

const latestAudit = async () => (await audit.list({ limit: 1 }))[0];

before(async () => {
  redis = await testRedis();
  const parsed = parseConfigText(CONFIG, "test.yaml");
  assert.ok(parsed.ok);
  store = new RedisTenantStore(redis.redis, redis.prefix);
  audit = new RedisAuditLog(redis.redis, redis.prefix);
  auth = createAuthDeps(parsed.value, store, { GEARBOX_ADMIN_KEY: BOOTSTRAP });
  server = await startAdminServer(
    { store, audit, auth, bootstrapKey: BOOTSTRAP, throttled: () => Promise.resolve(THROTTLED), logger: silentLogger() },
    0,
    "127.0.0.1",
  );
});

after(async () => {
  await server.close();
  await redis.close();
});

describe("admin API: who may call it", () => {
  test("no key → 401, and the attempt is audited as anonymous", async () => {
    const res = await api("GET", "/v1/tenants");
    assert.equal(res.status, 401);
    assert.equal(res.body.error?.code, "missing_api_key");
    const entry = await latestAudit();
    assert.equal(entry?.actor, "anonymous");
    assert.equal(entry?.action, "tenants.list");
    assert.equal(entry?.result, "missing_api_key");
  });

  test("a call key → 403 insufficient_permissions, audited with the key's id and prefix, never the key", async () => {
    const { key, id } = await createKey({ role: "call", tenant: "acme" });
    const res = await api("GET", "/v1/keys", key);
    assert.equal(res.status, 403);
    assert.deepEqual(res.body.error, { message: res.body.error?.message, type: "permission_error", param: null, code: "insufficient_permissions" });
    const entry = await latestAudit();
    assert.equal(entry?.actor, `${id} (${key.slice(0, 12)})`);
    assert.equal(entry?.action, "keys.list");
    assert.equal(entry?.result, "insufficient_permissions");
    assert.match(entry?.from ?? "", /127\.0\.0\.1$/);
    assert.ok(!JSON.stringify(await audit.list()).includes(key));
  });

  test("an unknown key → 401 invalid_api_key; a revoked admin key → 401 at once", async () => {
    assert.equal((await api("GET", "/v1/tenants", `gbx_admin_${"A".repeat(43)}`)).body.error?.code, "invalid_api_key");
    assert.equal((await latestAudit())?.actor, "unknown key");
    const admin = await createKey({ role: "admin", name: "ops" });
    assert.equal((await api("GET", "/v1/tenants", admin.key)).status, 200);
    assert.equal((await root("DELETE", `/v1/keys/${admin.id}`)).status, 200);
    assert.equal((await api("GET", "/v1/tenants", admin.key)).status, 401);
  });

  test("/healthz needs no key; an unknown URL is a 404; a wrong method a 405 naming the allowed ones", async () => {
    assert.equal((await api("GET", "/healthz")).status, 200);
    assert.equal((await root("GET", "/v1/nope")).body.error?.code, "unknown_url");
    const wrong = await root("PATCH", "/v1/tenants/acme");
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get("allow"), "GET, PUT, DELETE");
  });
});

describe("admin API: tenants", () => {
  test("PUT creates (201) then replaces (200) an admin tenant; GET and list show it beside the config's", async () => {
    const created = await root("PUT", "/v1/tenants/team", { limits: { requests_per_second: 5 }, ip_allowlist: ["10.0.0.0/8", "2001:db8::/32"] });
    assert.equal(created.status, 201);
    assert.equal(created.body.source, "admin");
    const replaced = await root("PUT", "/v1/tenants/team", { ...created.body, models: ["gpt-4o"] });
    assert.equal(replaced.status, 200, "a tenant read back (source included) can be sent as is");
    assert.deepEqual((await root("GET", "/v1/tenants/team")).body.models, ["gpt-4o"]);
    const ids = (await root("GET", "/v1/tenants")).body.data?.map((t) => `${String(t.id)}:${String(t.source)}`);
    assert.deepEqual(ids?.slice(0, 2), ["acme:config", "team:admin"]);
    assert.equal((await root("GET", "/v1/tenants/ghost")).status, 404);
  });

  test("a config tenant cannot be changed or deleted: 409 saying why, audited", async () => {
    for (const [method, body] of [
      ["PUT", { limits: {} }],
      ["DELETE", undefined],
    ] as const) {
      const res = await root(method, "/v1/tenants/acme", body);
      assert.equal(res.status, 409);
      assert.equal(res.body.error?.code, "tenant_from_config");
      assert.match(res.body.error?.message ?? "", /defined in the config file/);
      assert.equal((await latestAudit())?.result, "tenant_from_config");
    }
  });

  test("bad bodies are 400s naming the field", async () => {
    const notJson = await root("PUT", "/v1/tenants/bad", "{not json");
    assert.equal(notJson.status, 400);
    assert.equal(notJson.body.error?.code, "invalid_json");
    const cases: [unknown, string][] = [
      [{ limits: { requests_per_second: -1 } }, "limits.requests_per_second"],
      [{ ip_allowlist: ["10.0.0.0/33"] }, "ip_allowlist[0]"],
      [{ models: ["gpt-4o", "\u001b[2Jx"] }, "models[1]"],
      [{ principals: ["spiffe://a\r\nb"] }, "principals[0]"],
      [{ colour: "blue" }, ""],
      [{ id: "other" }, "id"],
      [[1, 2], "body"],
    ];
    for (const [body, param] of cases) {
      const res = await root("PUT", "/v1/tenants/bad", body);
      assert.equal(res.status, 400, JSON.stringify(body));
      if (param) assert.equal(res.body.error?.param, param);
      else assert.match(res.body.error?.message ?? "", /colour/);
    }
    assert.equal((await root("PUT", "/v1/tenants/Bad_ID", {})).body.error?.param, "id");
    assert.equal((await root("GET", "/v1/tenants/bad")).status, 404, "nothing was stored");
  });

  test("a workload identity bound to one tenant cannot be bound to another (409)", async () => {
    assert.equal((await root("PUT", "/v1/tenants/web", { principals: ["spiffe://c/ns/web/sa/a"] })).status, 201);
    const clash = await root("PUT", "/v1/tenants/web2", { principals: ["spiffe://c/ns/web/sa/a"] });
    assert.equal(clash.status, 409);
    assert.equal(clash.body.error?.code, "principal_in_use");
  });

  test("DELETE removes an admin tenant and revokes its keys", async () => {
    await root("PUT", "/v1/tenants/gone", {});
    const { key, id } = await createKey({ role: "call", tenant: "gone" });
    const res = await root("DELETE", "/v1/tenants/gone");
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.revoked_keys, [id]);
    assert.equal((await root("GET", "/v1/tenants/gone")).status, 404);
    assert.equal((await authenticate({ headers: { authorization: `Bearer ${key}` } }, auth)).ok, false);
  });
});

describe("admin API: keys", () => {
  test("a created call key is shown once, works for calls, lists by prefix only, and stops at revoke", async () => {
    const made = await root("POST", "/v1/keys", { role: "call", tenant: "acme", name: "checkout" });
    assert.equal(made.status, 201);
    const key = String(made.body.key);
    assert.match(key, /^gbx_call_[A-Za-z0-9_-]{43}$/);
    assert.match(String(made.body.warning), /only time the key is shown/);
    assert.equal(made.body.hash, undefined);
    const request = { headers: { authorization: `Bearer ${key}` }, sourceAddress: "10.0.0.1" };
    assert.equal((await authenticate(request, auth)).ok, true);
    // Another replica, with its own cache and clock.
    const clock = { now: 0 };
    const parsed = parseConfigText(CONFIG, "test.yaml");
    assert.ok(parsed.ok);
    const replica = createAuthDeps(parsed.value, store, {}, { keys: { now: () => clock.now } });
    assert.equal((await authenticate(request, replica)).ok, true);

    const listed = await root("GET", "/v1/keys?tenant=acme");
    const shown = listed.body.data?.find((k) => k.id === made.body.id);
    assert.equal(shown?.prefix, key.slice(0, 12));
    assert.equal(shown?.hash, undefined);
    assert.ok(!JSON.stringify(listed.body).includes(key.slice(12)));

    const revoked = await root("DELETE", `/v1/keys/${String(made.body.id)}`);
    assert.equal(revoked.status, 200);
    assert.ok(revoked.body.revoked_at);
    const here = await authenticate(request, auth);
    assert.ok(!here.ok && here.errors[0]?.status === 401, "this replica: at once");
    clock.now += 5_001;
    const there = await authenticate(request, replica);
    assert.ok(!there.ok && there.errors[0]?.status === 401, "other replicas: within the 5 s bound");
  });

  test("key requests are validated: role, a call key's tenant, the tenant's existence", async () => {
    assert.equal((await root("POST", "/v1/keys", { role: "root" })).body.error?.param, "role");
    assert.equal((await root("POST", "/v1/keys", { role: "call" })).body.error?.param, "tenant");
    const ghost = await root("POST", "/v1/keys", { role: "call", tenant: "ghost" });
    assert.equal(ghost.status, 400);
    assert.equal(ghost.body.error?.code, "tenant_not_found");
    assert.equal((await root("DELETE", "/v1/keys/key_0000000000000000")).status, 404);
  });

  test("key names must be printable: CR, LF, NUL, ESC, C1 and bidi overrides are a 400 naming the field", async () => {
    for (const name of ["evil\u001b]0;pwned\u0007", "two\r\nlines", "nul\u0000", "csi\u009b31m", "txt\u202eexe.sh"]) {
      const res = await root("POST", "/v1/keys", { role: "admin", name });
      assert.equal(res.status, 400, JSON.stringify(name));
      assert.equal(res.body.error?.param, "name");
      assert.equal(res.body.error?.code, "invalid_field");
      assert.match(res.body.error?.message ?? "", /name: must be printable text/);
    }
    assert.equal((await root("POST", "/v1/keys", { role: "admin", name: "Café ops 🚀" })).status, 201);
  });

  test("the bootstrap key cannot be revoked over the API (409)", async () => {
    const res = await root("DELETE", "/v1/keys/key_bootstrap");
    assert.equal(res.status, 409);
    assert.equal(res.body.error?.code, "bootstrap_key");
  });
});

describe("admin API: a tenant-scoped admin key manages only its tenant", () => {
  test("reads, keys and limits of its own tenant; 403 elsewhere", async () => {
    await root("PUT", "/v1/tenants/team", {});
    const { key: teamAdmin } = await createKey({ role: "admin", tenant: "team" });
    assert.deepEqual(
      (await api("GET", "/v1/tenants", teamAdmin)).body.data?.map((t) => t.id),
      ["team"],
    );
    assert.equal((await api("GET", "/v1/tenants/team", teamAdmin)).status, 200);
    for (const [method, path, body] of [
      ["GET", "/v1/tenants/acme", undefined],
      ["PUT", "/v1/tenants/other", {}],
      ["POST", "/v1/keys", { role: "call", tenant: "acme" }],
      ["GET", "/v1/keys?tenant=acme", undefined],
      ["GET", "/v1/audit", undefined],
    ] as const) {
      const res = await api(method, path, teamAdmin, body);
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.equal(res.body.error?.code, "insufficient_permissions");
    }
    const made = await api("POST", "/v1/keys", teamAdmin, { role: "call" });
    assert.equal(made.status, 201);
    assert.equal(made.body.tenant, "team", "its own tenant by default");
    const acmeKey = await createKey({ role: "call", tenant: "acme" });
    assert.equal((await api("DELETE", `/v1/keys/${acmeKey.id}`, teamAdmin)).status, 403);
    assert.deepEqual((await api("GET", "/v1/limits", teamAdmin)).body.data, [THROTTLED[1]]);
  });
});

describe("admin API: limits and the audit log", () => {
  test("GET /v1/limits shows who is throttled now", async () => {
    assert.deepEqual((await root("GET", "/v1/limits")).body, { object: "list", data: THROTTLED });
  });

  test("every action leaves who, what, on what, when, from where and the result; nothing can change the log", async () => {
    const { id } = await createKey({ role: "call", tenant: "acme", name: "audited" });
    const entry = await latestAudit();
    assert.equal(entry?.actor, "key_bootstrap (env:GEARBOX_ADMIN_KEY)");
    assert.equal(entry?.action, "keys.create");
    assert.equal(entry?.target, id);
    assert.equal(entry?.result, "ok");
    assert.match(entry?.from ?? "", /127\.0\.0\.1$/);
    assert.ok(Math.abs(Date.parse(entry?.at ?? "") - Date.now()) < 60_000);
    assert.deepEqual(entry?.details, { role: "call", tenant: "acme", prefix: entry?.details?.prefix });

    const page = await root("GET", "/v1/audit?limit=5");
    assert.equal(page.body.data?.length, 5);
    const before = await audit.list({ limit: 1000 });
    for (const method of ["PUT", "POST", "DELETE"]) {
      const res = await root(method, "/v1/audit", {});
      assert.equal(res.status, 405);
      assert.equal(res.headers.get("allow"), "GET");
    }
    const afterwards = await audit.list({ limit: 1000 });
    assert.deepEqual(afterwards.slice(3), before, "earlier entries unchanged; the refused attempts were appended");
    assert.deepEqual(
      afterwards.slice(0, 3).map((e) => e.result),
      ["method_not_allowed", "method_not_allowed", "method_not_allowed"],
    );
    assert.equal((await root("GET", "/v1/audit?limit=0")).body.error?.param, "limit");
    assert.equal((await root("GET", "/v1/audit?before=abc")).body.error?.param, "before");
  });
});

test("admin API: an audit log that cannot be written does not lose the answer", async () => {
  const failing = { append: () => Promise.reject(new Error("redis down")), list: () => Promise.resolve([]) };
  const other = await startAdminServer(
    { store, audit: failing, auth, bootstrapKey: BOOTSTRAP, throttled: () => Promise.resolve([]), logger: silentLogger() },
    0,
    "127.0.0.1",
  );
  try {
    const res = await fetch(`http://127.0.0.1:${other.port}/v1/limits`, { headers: { authorization: `Bearer ${BOOTSTRAP}` } });
    assert.equal(res.status, 200);
  } finally {
    await other.close();
  }
});
