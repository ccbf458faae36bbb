/** `gearbox tenants | keys | limits` against a running admin API (Redis-backed stores). */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { startAdminServer, type AdminServer, type ThrottledCaller } from "../extproc/admin/server.ts";
import { parseConfigText } from "../extproc/config/load.ts";
import { authenticate, createAuthDeps, type AuthDeps } from "../extproc/governance/auth.ts";
import { RedisAuditLog } from "../extproc/store/redis-audit-log.ts";
import { RedisTenantStore } from "../extproc/store/redis-tenant-store.ts";
import { generateKey } from "../extproc/governance/keys.ts";
import { isPrintable } from "../common/schemas/printable.ts";
import { testRedis, type TestRedis } from "../extproc/store/test-redis.ts";
import { silentLogger } from "../common/telemetry/logger.ts";
import type { CliIo } from "./admin-client.ts";
import { runKeys } from "./keys.ts";
import { runLimits } from "./limits.ts";
import { runTenants } from "./tenants.ts";

const BOOTSTRAP = randomBytes(32).toString("base64url");
let throttled: ThrottledCaller[] = [];
let redis: TestRedis;
let server: AdminServer;
let auth: AuthDeps;
let env: NodeJS.ProcessEnv;
const dir = mkdtempSync(path.join(tmpdir(), "gearbox-admin-cli-"));

interface Run {
  code: number;
  out: string;
  err: string;
}

async function run(verb: (args: string[], io: CliIo) => Promise<number>, args: string[], runEnv: NodeJS.ProcessEnv = env): Promise<Run> {
  let out = "";
  let err = "";
  const code = await verb(args, { out: (t) => (out += t), err: (t) => (err += t), env: runEnv });
  return { code, out, err };
}

function file(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}

before(async () => {
  redis = await testRedis();
  const parsed = parseConfigText("tenants:\n  - { id: acme }\n", "test.yaml");
  assert.ok(parsed.ok);
  const store = new RedisTenantStore(redis.redis, redis.prefix);
  auth = createAuthDeps(parsed.value, store, { GEARBOX_ADMIN_KEY: BOOTSTRAP });
  server = await startAdminServer(
    {
      store,
      audit: new RedisAuditLog(redis.redis, redis.prefix),
      auth,
      bootstrapKey: BOOTSTRAP,
      throttled: () => Promise.resolve(throttled),
      logger: silentLogger(),
    },
    0,
    "127.0.0.1",
  );
  env = { GEARBOX_ADMIN_URL: `http://127.0.0.1:${server.port}`, GEARBOX_ADMIN_KEY: BOOTSTRAP };
});

after(async () => {
  await server.close();
  await redis.close();
});

describe("gearbox keys", () => {
  test("create prints the key alone on stdout, once, and warns on stderr; the key makes calls", async () => {
    const made = await run(runKeys, ["create", "--role", "call", "--tenant", "acme", "--name", "checkout"]);
    assert.equal(made.code, 0, made.err);
    assert.match(made.out, /^gbx_call_[A-Za-z0-9_-]{43}\n$/);
    assert.match(made.err, /created call key key_[0-9a-f]+ \(gbx_call_...\) for tenant acme/);
    assert.match(made.err, /warning: this key will not be shown again/);
    const caller = await authenticate({ headers: { authorization: `Bearer ${made.out.trim()}` } }, auth);
    assert.ok(caller.ok && caller.value.tenant.id === "acme");
  });

  test("list shows prefixes, never keys; revoke stops the key", async () => {
    const key = (await run(runKeys, ["create", "--role", "call", "--tenant", "acme", "--name", "to-revoke"])).out.trim();
    const listed = await run(runKeys, ["list", "--tenant", "acme"]);
    assert.equal(listed.code, 0);
    assert.match(listed.out, /^ID\s+PREFIX\s+ROLE\s+TENANT\s+NAME\s+CREATED\s+REVOKED\n/);
    const line = listed.out.split("\n").find((l) => l.includes("to-revoke"));
    assert.ok(line !== undefined, listed.out);
    assert.ok(line.includes(key.slice(0, 12)));
    assert.ok(!listed.out.includes(key.slice(12)));
    const id = line.split(/\s+/)[0] ?? "";
    const revoked = await run(runKeys, ["revoke", id]);
    assert.equal(revoked.code, 0, revoked.err);
    assert.match(revoked.out, new RegExp(`^revoked ${id} \\(${key.slice(0, 12).replace(/[-_]/g, "\\$&")}\\) at \\d{4}-`));
    assert.equal((await authenticate({ headers: { authorization: `Bearer ${key}` } }, auth)).ok, false);
    const json = JSON.parse((await run(runKeys, ["list", "--json"])).out) as { id: string; revoked_at?: string }[];
    assert.ok(json.find((k) => k.id === id)?.revoked_at);
  });

  test("usage errors exit 2 with the usage; server refusals exit 1 with the server's message", async () => {
    for (const args of [["create"], ["create", "--role", "root"], ["revoke"], ["frob"], [], ["list", "extra"], ["list", "--bogus"]]) {
      const r = await run(runKeys, args);
      assert.equal(r.code, 2, args.join(" "));
      assert.match(r.err, /usage: gearbox keys create/);
    }
    const ghost = await run(runKeys, ["revoke", "key_0000000000000000"]);
    assert.equal(ghost.code, 1);
    assert.equal(ghost.err, "gearbox keys: No key 'key_0000000000000000'. (HTTP 404)\n");
    assert.equal((await run(runKeys, ["--help"])).code, 0);
  });

  test("names are printed escaped, never as terminal control sequences (a name stored before validation existed)", async () => {
    const evil = "x\u001b]0;pwned\u0007\r\n\u009b2J\u202e";
    const { record } = generateKey({ role: "call", tenant: "acme", name: evil, createdBy: "test" }, new Date());
    await new RedisTenantStore(redis.redis, redis.prefix).putKey(record);
    const listed = await run(runKeys, ["list", "--tenant", "acme"]);
    assert.equal(listed.code, 0, listed.err);
    for (const line of listed.out.split("\n")) assert.ok(isPrintable(line), JSON.stringify(line));
    assert.ok(listed.out.includes("x\\x1b]0;pwned\\x07\\x0d\\x0a\\x9b2J\\u202e"), listed.out);
    const json = await run(runKeys, ["list", "--tenant", "acme", "--json"]);
    for (const line of json.out.split("\n")) assert.ok(isPrintable(line), JSON.stringify(line));
    assert.ok(
      (JSON.parse(json.out) as { name: string }[]).some((k) => k.name === evil),
      "the JSON still carries the name itself",
    );
    const refused = await run(runTenants, ["get", "\u001b[2J"]);
    assert.equal(refused.code, 1);
    assert.equal(refused.err, "gearbox tenants: No tenant '\\x1b[2J'. (HTTP 404)\n");
  });
});

describe("gearbox tenants", () => {
  test("put reads a tenants: section from YAML; list, get and delete follow", async () => {
    const yaml = file(
      "tenants.yaml",
      "tenants:\n  - id: team\n    models: [gpt-4o-mini]\n    limits: { requests_per_second: 5 }\n    ip_allowlist: [10.0.0.0/8]\n  - id: lab\n",
    );
    const put = await run(runTenants, ["put", yaml]);
    assert.equal(put.code, 0, put.err);
    assert.equal(put.out, "tenant team saved\ntenant lab saved\n");
    const listed = await run(runTenants, ["list"]);
    assert.match(listed.out, /^ID\s+SOURCE\s+MODELS/);
    assert.match(listed.out, /\nacme\s+config\s+-/);
    assert.match(listed.out, /\nteam\s+admin\s+gpt-4o-mini\s+requests_per_second=5\s+10\.0\.0\.0\/8\s+-\n/);
    const got = JSON.parse((await run(runTenants, ["get", "team"])).out) as { id: string; limits: unknown };
    assert.deepEqual(got.limits, { requests_per_second: 5 });
    const json = file("one.json", JSON.stringify({ id: "solo", degrade_to_edge: true }));
    assert.equal((await run(runTenants, ["put", json])).code, 0);
    const deleted = await run(runTenants, ["delete", "lab"]);
    assert.equal(deleted.out, "tenant lab deleted\n");
    assert.equal((await run(runTenants, ["get", "lab"])).code, 1);
  });

  test("the server's validation and refusals are printed as they are, exit 1", async () => {
    const bad = await run(runTenants, ["put", file("bad.yaml", "id: broken\nip_allowlist: [10.0.0.0/99]\n")]);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /^gearbox tenants: tenant 'broken': Invalid request body: ip_allowlist\[0\]: must be a CIDR .* \(HTTP 400\)\n$/);
    const config = await run(runTenants, ["delete", "acme"]);
    assert.equal(config.code, 1);
    assert.match(config.err, /defined in the config file.*\(HTTP 409\)/);
  });

  test("a file with no id, or none at all, is a usage error", async () => {
    assert.equal((await run(runTenants, ["put", file("noid.yaml", "models: [a]\n")])).code, 2);
    assert.equal((await run(runTenants, ["put", path.join(dir, "missing.yaml")])).code, 2);
    assert.equal((await run(runTenants, ["get"])).code, 2);
  });
});

describe("gearbox limits", () => {
  test("show lists who is throttled, or says no one is", async () => {
    throttled = [];
    assert.equal((await run(runLimits, ["show"])).out, "no one is being throttled\n");
    throttled = [
      { tenant: "acme", key: "key_1", limit: "tokens_per_minute", until: "2025-01-01T00:01:00.000Z", detail: "1200/1000" },
      { tenant: "team", limit: "requests_per_second" },
    ];
    const shown = await run(runLimits, ["show"]);
    assert.equal(shown.code, 0);
    assert.match(shown.out, /^TENANT\s+KEY\s+LIMIT\s+UNTIL\s+DETAIL\n/);
    assert.match(shown.out, /\nacme\s+key_1\s+tokens_per_minute\s+2025-01-01T00:01:00.000Z\s+1200\/1000\n/);
    assert.match(shown.out, /\nteam\s+-\s+requests_per_second\s+-\s+-\n/);
    assert.deepEqual(JSON.parse((await run(runLimits, ["show", "--json"])).out), throttled);
    assert.equal((await run(runLimits, [])).code, 2);
  });
});

describe("admin client errors", () => {
  test("no admin key is a usage error; a call key gets the server's 403 message; an unreachable API says where", async () => {
    const none = await run(runLimits, ["show"], { GEARBOX_ADMIN_URL: env.GEARBOX_ADMIN_URL });
    assert.equal(none.code, 2);
    assert.match(none.err, /GEARBOX_ADMIN_KEY is not set/);
    const callKey = (await run(runKeys, ["create", "--role", "call", "--tenant", "acme"])).out.trim();
    const refused = await run(runTenants, ["list"], { ...env, GEARBOX_ADMIN_KEY: callKey });
    assert.equal(refused.code, 1);
    assert.match(refused.err, /^gearbox tenants: This key can only make model calls; the admin API needs an admin key. \(HTTP 403\)\n$/);
    const gone = await run(runLimits, ["show"], { ...env, GEARBOX_ADMIN_URL: "http://127.0.0.1:1" });
    assert.equal(gone.code, 1);
    assert.match(gone.err, /cannot reach the admin API at http:\/\/127\.0\.0\.1:1/);
  });
});

test("the gearbox binary runs the verbs with their exit codes", async () => {
  const bin = fileURLToPath(new URL("../bin/gearbox.mjs", import.meta.url));
  const exec = (args: string[]) =>
    new Promise<{ code: number | null; out: string; err: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH, ...env } });
      let out = "";
      let err = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (err += d.toString()));
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, out, err }));
    });
  const listed = await exec(["tenants", "list"]);
  assert.equal(listed.code, 0, listed.err);
  assert.match(listed.out, /\nacme\s+config/);
  assert.equal((await exec(["keys", "revoke"])).code, 2);
  // report and replay are built: without their file they are a usage error naming what is missing.
  const report = await exec(["report"]);
  assert.equal(report.code, 2);
  assert.match(report.err, /^gearbox report: no log file given\n/);
  const replay = await exec(["replay"]);
  assert.equal(replay.code, 2);
  assert.match(replay.err, /^gearbox replay: no traffic file given\n/);
  const calibrate = await exec(["calibrate"]);
  assert.equal(calibrate.code, 2);
  assert.match(calibrate.err, /^gearbox calibrate: no labelled file given\n/);
  const ca = await exec(["ca"]);
  assert.equal(ca.code, 2);
  assert.match(ca.err, /^gearbox ca: which: init, issue, rotate or bundle\?\n/);
});
