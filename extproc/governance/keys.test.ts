import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { bootstrapKeyRecord, checkSecrets, generateKey, hashKey, isGearboxKey, isPlaceholderSecret, PREFIX_LENGTH, verifyKey } from "./keys.ts";

test("generateKey: gbx_<role>_ + 43 base64url characters, unique, with a 12-character prefix", () => {
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const role = i % 2 === 0 ? "call" : "admin";
    const { key, record } = generateKey({ role, tenant: "acme", name: "ci", createdBy: "key_root" });
    assert.match(key, role === "call" ? /^gbx_call_[A-Za-z0-9_-]{43}$/ : /^gbx_admin_[A-Za-z0-9_-]{43}$/);
    assert.ok(isGearboxKey(key));
    assert.equal(record.prefix, key.slice(0, PREFIX_LENGTH));
    assert.equal(record.prefix.length, 12);
    assert.match(record.id, /^key_[0-9a-f]{16}$/);
    seen.add(key);
    seen.add(record.id);
  }
  assert.equal(seen.size, 400, "keys and ids never repeat");
});

test("generateKey: the record holds the SHA-256 of the key and nothing else of it", () => {
  const { key, record } = generateKey(
    { role: "call", tenant: "acme", name: "svc", createdBy: "key_root", limits: { requests_per_second: 5 } },
    new Date("2025-01-02T03:04:05Z"),
  );
  assert.equal(record.hash, hashKey(key));
  assert.match(record.hash, /^[0-9a-f]{64}$/);
  assert.deepEqual(record, {
    id: record.id,
    role: "call",
    tenant: "acme",
    name: "svc",
    prefix: record.prefix,
    hash: record.hash,
    limits: { requests_per_second: 5 },
    created_at: "2025-01-02T03:04:05.000Z",
    created_by: "key_root",
  });
  const stored = JSON.stringify(record);
  assert.ok(!stored.includes(key));
  assert.ok(!stored.includes(key.slice(PREFIX_LENGTH)), "no part of the secret beyond the prefix");
});

test("verifyKey: the right key passes; a wrong, shorter, longer or empty one fails; a malformed hash fails", () => {
  const { key, record } = generateKey({ role: "call", tenant: "acme", name: "svc", createdBy: "x" });
  assert.ok(verifyKey(key, record));
  const flipped = key.slice(0, -1) + (key.endsWith("A") ? "B" : "A");
  for (const wrong of [flipped, key.slice(0, -1), key + "x", "", generateKey({ role: "call", name: "n", createdBy: "x" }).key])
    assert.ok(!verifyKey(wrong, record), wrong);
  assert.ok(!verifyKey(key, { hash: "abcd" }), "a hash of the wrong length never matches");
});

test("isGearboxKey: only the two key shapes", () => {
  assert.ok(!isGearboxKey("sk-proj-abc"));
  assert.ok(!isGearboxKey("gbx_root_" + "a".repeat(43)));
  assert.ok(!isGearboxKey("gbx_call_" + "a".repeat(42)));
});

test("isPlaceholderSecret: refuses short, default, repeated and template secrets", () => {
  const placeholders = [
    "",
    "changeme",
    "a-random-looking-but-short-1234",
    "changeme-changeme-changeme-changeme",
    "my-super-secret-gearbox-admin-key-2024",
    "password-password-password-password!",
    "your-api-key-here-your-api-key-here",
    "example-test-default-secret-token-value",
    "a".repeat(64),
    "abababababababababababababababababab",
    "sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "sk-proj-XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
    "<put-your-gearbox-admin-key-in-here-now>",
    "${GEARBOX_ADMIN_KEY_FROM_THE_VAULT_SECRET}",
    "{{ .Values.gearbox.adminKey | default }}",
  ];
  for (const s of placeholders) assert.ok(isPlaceholderSecret(s), `should refuse ${JSON.stringify(s)}`);
});

test("isPlaceholderSecret: accepts random secrets of the usual forms", () => {
  for (let i = 0; i < 500; i++) {
    const bytes = randomBytes(32);
    for (const s of [bytes.toString("base64"), bytes.toString("base64url"), bytes.toString("hex"), randomBytes(16).toString("hex")]) {
      assert.ok(!isPlaceholderSecret(s), `should accept ${s}`);
    }
    assert.ok(!isPlaceholderSecret(generateKey({ role: "admin", name: "n", createdBy: "x" }).key), "Gearbox's own keys");
  }
});

test("checkSecrets: names the variable and the reason, never the value", () => {
  const refused = checkSecrets({ GEARBOX_ADMIN_KEY: "changeme-changeme-changeme-changeme" });
  assert.ok(!refused.ok);
  assert.equal(refused.errors.length, 1);
  assert.match(refused.errors[0] ?? "", /^GEARBOX_ADMIN_KEY: refusing to start with a placeholder or default secret \(made of common placeholder words/);
  assert.ok(!(refused.errors[0] ?? "").includes("changeme-changeme"));
  const empty = checkSecrets({ GEARBOX_ADMIN_KEY: "" });
  assert.ok(!empty.ok && /shorter than 32 characters/.test(empty.errors[0] ?? ""), "set but empty is refused too");
  assert.ok(checkSecrets({}).ok, "no bootstrap key: nothing to check");
  assert.ok(checkSecrets({ GEARBOX_ADMIN_KEY: randomBytes(32).toString("base64") }).ok);
});

test("bootstrapKeyRecord: a global admin key whose prefix names the variable, not the secret", () => {
  const secret = randomBytes(32).toString("base64url");
  const record = bootstrapKeyRecord(secret);
  assert.equal(record.role, "admin");
  assert.equal(record.tenant, undefined);
  assert.equal(record.prefix, "env:GEARBOX_ADMIN_KEY");
  assert.ok(verifyKey(secret, record));
  assert.ok(!JSON.stringify(record).includes(secret.slice(0, 6)));
});
