import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import type { ApiKeyRecord, Caller } from "./model.ts";
import { callerFingerprint, requestFingerprint, runawayCheck, runawayScope } from "./runaway.ts";

const body = '{"model":"gpt-4.1","messages":[{"role":"user","content":"hi"}]}';
const CONFIG = { enable: true, window_ms: 10_000, max_identical: 3 };
const SHAPE = { endpoint: "chat_completions", model: "gpt-4.1", stream: false };

function caller(tenant: string, keyId?: string): Caller {
  const key: ApiKeyRecord | undefined =
    keyId === undefined ? undefined : { id: keyId, role: "call", tenant, name: "web", prefix: "gbx_call_Ab12", hash: "0", created_at: "", created_by: "" };
  return { tenant: { id: tenant, limits: {}, degrade_to_edge: false, source: "config" }, ...(key && { key }), via: key ? "key" : "anonymous" };
}

test("a fingerprint is stable, and differs by scope and by request", () => {
  const a = requestFingerprint("shop", body);
  assert.match(a, /^[0-9a-f]{32}$/);
  assert.equal(requestFingerprint("shop", Buffer.from(body)), a);
  assert.notEqual(requestFingerprint("bank", body), a);
  assert.notEqual(requestFingerprint("shop", body.replace("hi", "hi!")), a);
});

test("a body's bytes are fingerprinted as they are: invalid UTF-8 and formatting are not smoothed over", () => {
  const bytes = (...b: number[]) => Buffer.from(b);
  // Decoded as UTF-8, both would be one U+FFFD and share a fingerprint.
  assert.notEqual(requestFingerprint("shop", bytes(0x7b, 0xff, 0x7d)), requestFingerprint("shop", bytes(0x7b, 0xfe, 0x7d)));
  // "é" in UTF-8 and in Latin-1 are different bodies.
  assert.notEqual(requestFingerprint("shop", Buffer.from('{"c":"é"}')), requestFingerprint("shop", Buffer.from('{"c":"é"}', "latin1")));
  assert.equal(requestFingerprint("shop", Buffer.from('{"c":"é"}')), requestFingerprint("shop", Buffer.from('{"c":"é"}')));
  // A text is its UTF-8 bytes.
  assert.equal(requestFingerprint("shop", '{"c":"é 你好 😀"}'), requestFingerprint("shop", Buffer.from('{"c":"é 你好 😀"}')));
  // Short bodies and long ones take different ways into the hash: the same bytes are hashed.
  for (const size of [0, 1, 4095, 4096, 4097, 20_000]) {
    const long = Buffer.alloc(size, "é");
    assert.equal(
      requestFingerprint("shop\nk:key_1", long),
      createHash("sha256")
        .update(Buffer.concat([Buffer.from("shop\nk:key_1\n"), long]))
        .digest("hex")
        .slice(0, 32),
      `${size} bytes`,
    );
  }
  // The same request sent pretty-printed is another body: a loop resends the same bytes.
  const pretty = JSON.stringify(JSON.parse(body), null, 2);
  assert.notEqual(requestFingerprint("shop", Buffer.from(pretty)), requestFingerprint("shop", Buffer.from(body)));
});

test("the caller within the tenant: the key's id, else the workload identity, else the source address, else the tenant", () => {
  const client = { address: "10.0.0.7", principal: "spiffe://cluster.local/ns/shop/sa/web" };
  assert.deepEqual(runawayScope("caller", caller("shop", "key_1"), client), { scope: "shop\nk:key_1", who: "key 'key_1' (gbx_call_Ab12…) of tenant 'shop'" });
  assert.deepEqual(runawayScope("caller", caller("shop"), client), {
    scope: "shop\np:spiffe://cluster.local/ns/shop/sa/web",
    who: "caller spiffe://cluster.local/ns/shop/sa/web of tenant 'shop'",
  });
  assert.deepEqual(runawayScope("caller", caller("shop"), { address: "10.0.0.7" }), { scope: "shop\na:10.0.0.7", who: "caller 10.0.0.7 of tenant 'shop'" });
  assert.deepEqual(runawayScope("caller", caller("shop"), {}), { scope: "shop", who: "tenant 'shop'" });
  assert.deepEqual(runawayScope("tenant", caller("shop", "key_1"), client), { scope: "shop", who: "tenant 'shop'" });
});

test("identical requests of different callers, tenants, endpoints, models or streaming never share a fingerprint", () => {
  const of = (c: Caller, client = {}, shape = SHAPE) => callerFingerprint(runawayScope("caller", c, client), shape, body);
  const base = of(caller("shop", "key_1"));
  assert.equal(of(caller("shop", "key_1")), base);
  const others = [
    of(caller("shop", "key_2")),
    of(caller("bank", "key_1")),
    of(caller("shop"), { address: "10.0.0.7" }),
    of(caller("shop"), { address: "10.0.0.8" }),
    of(caller("shop", "key_1"), {}, { ...SHAPE, stream: true }),
    of(caller("shop", "key_1"), {}, { ...SHAPE, endpoint: "messages" }),
    of(caller("shop", "key_1"), {}, { ...SHAPE, model: "gpt-4o" }),
  ];
  assert.equal(new Set([base, ...others]).size, others.length + 1);
  // By tenant: one count whoever calls.
  assert.equal(
    callerFingerprint(runawayScope("tenant", caller("shop", "key_1"), {}), SHAPE, body),
    callerFingerprint(runawayScope("tenant", caller("shop", "key_2"), {}), SHAPE, body),
  );
});

test("the runaway check counts identical requests per window, and is absent when off or unfingerprinted", () => {
  assert.deepEqual(runawayCheck(CONFIG, "abc")?.check, { kind: "repeat", key: "fp:abc", limit: 3, windowMs: 10_000, label: "tenant/runaway" });
  assert.equal(runawayCheck({ ...CONFIG, enable: false }, "abc"), undefined);
  assert.equal(runawayCheck(CONFIG, undefined), undefined);
});
