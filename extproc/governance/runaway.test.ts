import assert from "node:assert/strict";
import { test } from "node:test";
import { requestFingerprint, runawayCheck } from "./runaway.ts";

const body = '{"model":"gpt-4.1","messages":[{"role":"user","content":"hi"}]}';

test("a fingerprint is stable, and differs by tenant and by request", () => {
  const a = requestFingerprint("shop", body);
  assert.match(a, /^[0-9a-f]{32}$/);
  assert.equal(requestFingerprint("shop", Buffer.from(body)), a);
  assert.notEqual(requestFingerprint("bank", body), a);
  assert.notEqual(requestFingerprint("shop", body.replace("hi", "hi!")), a);
});

test("the runaway check counts identical requests per window, and is absent when off or unfingerprinted", () => {
  const config = { enable: true, window_ms: 10_000, max_identical: 3 };
  assert.deepEqual(runawayCheck(config, "abc")?.check, { kind: "repeat", key: "fp:abc", limit: 3, windowMs: 10_000, label: "tenant/runaway" });
  assert.equal(runawayCheck({ ...config, enable: false }, "abc"), undefined);
  assert.equal(runawayCheck(config, undefined), undefined);
});
