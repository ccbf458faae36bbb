/**
 * The one suite every `LimiterStore` runs (`memory-limiter.test.ts`, `redis-limiter.test.ts`).
 * Nothing is skipped. Time passes through the harness (a fake clock's step, or a real sleep for
 * Redis, whose scripts read the server's clock). Refusals are asserted in 60 s windows so that a
 * slow machine cannot make them pass by accident; expiries use short windows and only wait.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Admission, BudgetCheck, Check, Grant, LeaseCheck, LimiterStore, RateCheck, RepeatCheck } from "./limiter.ts";

export interface LimiterHarness {
  store: LimiterStore;
  /** The store's clock (ms since the epoch). */
  now(): number;
  /** Lets `ms` pass on the store's clock. */
  advance(ms: number): Promise<void>;
}

const LONG = 60_000;
/** Budget windows are aligned on the epoch: a year-long one is not crossed during a test. */
const YEAR = 365 * 86_400_000;
/** Long enough that two consecutive calls on a loaded machine stay inside it. */
const SHORT = 400;
const TTL = 60_000;

const rate = (limit: number, windowMs = LONG, key = "rps"): RateCheck => ({ kind: "rate", key, limit, windowMs, label: `tenant/${key}` });
const budget = (limit: number, amount: number, windowMs = YEAR, key = "tpm"): BudgetCheck => ({
  kind: "budget",
  key,
  limit,
  amount,
  windowMs,
  meter: "tokens",
  label: `tenant/${key}`,
});
const lease = (limit: number, key = "conc"): LeaseCheck => ({ kind: "lease", key, limit, label: `tenant/${key}` });
const repeat = (limit: number, windowMs = LONG, key = "fp:abc"): RepeatCheck => ({ kind: "repeat", key, limit, windowMs, label: "tenant/runaway" });

function granted(admission: Admission): Grant {
  assert.ok(admission.ok, `expected an admission, got a refusal of check ${admission.ok ? "" : admission.failed}`);
  return admission.grant;
}

function refused(admission: Admission): Extract<Admission, { ok: false }> {
  assert.ok(!admission.ok, "expected a refusal");
  return admission;
}

export function limiterCases(name: string, harness: () => LimiterHarness): void {
  let n = 0;
  /** A tenant no other test uses. */
  const tenant = () => `case${n++}`;

  describe(`${name}: shared limiter suite`, () => {
    const admitMany = (store: LimiterStore, t: string, checks: Check[], count: number) =>
      Promise.all(Array.from({ length: count }, () => Promise.resolve(store.admit(t, checks, TTL))));

    /** Waits for the start of a fresh window of `windowMs`, so that a test's steps share one window. */
    const alignTo = async (h: LimiterHarness, windowMs: number) => h.advance(windowMs - (h.now() % windowMs) + 20);

    test("rate: admits `limit` per window, then refuses with the wait until the oldest admission leaves", async () => {
      const { store } = harness();
      const t = tenant();
      const remaining: number[] = [];
      for (let i = 0; i < 5; i++) {
        const admission = await store.admit(t, [rate(5)], TTL);
        granted(admission);
        if (admission.ok) remaining.push(admission.remaining[0] ?? -1);
      }
      assert.deepEqual(remaining, [4, 3, 2, 1, 0]);
      const no = refused(await store.admit(t, [rate(5)], TTL));
      assert.equal(no.failed, 0);
      assert.equal(no.used, 5);
      assert.ok(no.retryAfterMs > 0 && no.retryAfterMs <= LONG, `retryAfterMs ${no.retryAfterMs}`);
    });

    test("rate: an admission leaves the sliding window after windowMs", async () => {
      const h = harness();
      const t = tenant();
      granted(await h.store.admit(t, [rate(2, SHORT)], TTL));
      granted(await h.store.admit(t, [rate(2, SHORT)], TTL));
      await h.advance(SHORT + 50);
      granted(await h.store.admit(t, [rate(2, SHORT)], TTL));
    });

    test("rate: 200 concurrent admissions against a limit of 50 admit exactly 50", async () => {
      const { store } = harness();
      const results = await admitMany(store, tenant(), [rate(50)], 200);
      assert.equal(results.filter((r) => r.ok).length, 50);
    });

    test("budget: admits iff used + held + amount ≤ limit; settle swaps the estimate for the actual", async () => {
      const { store } = harness();
      const t = tenant();
      const first = await store.admit(t, [budget(1000, 600)], TTL);
      assert.deepEqual(first.ok && first.remaining, [400]);
      const over = refused(await store.admit(t, [budget(1000, 500)], TTL));
      assert.equal(over.used, 600);
      assert.ok(over.retryAfterMs > 0 && over.retryAfterMs <= YEAR);
      granted(await store.admit(t, [budget(1000, 400)], TTL));
      await store.settle(granted(first), { tokens: 100 });
      const after = await store.admit(t, [budget(1000, 500)], TTL);
      assert.deepEqual(after.ok && after.remaining, [0]);
      assert.equal(refused(await store.admit(t, [budget(1000, 1)], TTL)).used, 1000);
    });

    test("budget: 200 concurrent reservations of 7 against 1,000 admit exactly 142", async () => {
      const { store } = harness();
      const t = tenant();
      const results = await admitMany(store, t, [budget(1000, 7)], 200);
      assert.equal(results.filter((r) => r.ok).length, 142);
      assert.equal(refused(await store.admit(t, [budget(1000, 7)], TTL)).used, 994);
    });

    test("budget: the next window forgets what was booked; in-flight reservations carry over", async () => {
      const h = harness();
      const t = tenant();
      const window = 1_000;
      await alignTo(h, window);
      await h.store.settle(granted(await h.store.admit(t, [budget(1000, 600, window)], TTL)), { tokens: 600 });
      granted(await h.store.admit(t, [budget(1000, 300, window)], TTL));
      assert.equal(refused(await h.store.admit(t, [budget(1000, 200, window)], TTL)).used, 900);
      await alignTo(h, window);
      granted(await h.store.admit(t, [budget(1000, 700, window)], TTL));
      assert.equal(refused(await h.store.admit(t, [budget(1000, 1, window)], TTL)).used, 1000);
    });

    test("budget: a reservation never settled expires after its TTL, booked at its estimate; a late settlement adds only an overrun", async () => {
      const h = harness();
      const t = tenant();
      const lost = granted(await h.store.admit(t, [budget(1000, 600)], SHORT));
      await h.advance(SHORT + 50);
      assert.equal(refused(await h.store.admit(t, [budget(1000, 500)], TTL)).used, 600);
      granted(await h.store.admit(t, [budget(1000, 400)], TTL));
      await h.store.settle(lost, { tokens: 100 });
      assert.equal(refused(await h.store.admit(t, [budget(1000, 1)], TTL)).used, 1000);
      await h.store.settle(lost, { tokens: 700 });
      assert.equal(refused(await h.store.admit(t, [budget(1000, 1)], TTL)).used, 1100);
    });

    test("lease: at most `limit` live leases; settling releases one", async () => {
      const { store } = harness();
      const t = tenant();
      const first = granted(await store.admit(t, [lease(2)], TTL));
      granted(await store.admit(t, [lease(2)], TTL));
      const full = refused(await store.admit(t, [lease(2)], TTL));
      assert.equal(full.used, 2);
      await store.settle(first, {});
      granted(await store.admit(t, [lease(2)], TTL));
      refused(await store.admit(t, [lease(2)], TTL));
    });

    test("lease: an unrenewed lease expires after its TTL; a renewed one stays", async () => {
      const h = harness();
      const [lapsed, kept] = [tenant(), tenant()];
      granted(await h.store.admit(lapsed, [lease(1)], SHORT));
      refused(await h.store.admit(lapsed, [lease(1)], TTL));
      const held = granted(await h.store.admit(kept, [lease(1)], SHORT));
      await h.store.renew(held, TTL);
      await h.advance(SHORT + 50);
      granted(await h.store.admit(lapsed, [lease(1)], TTL));
      refused(await h.store.admit(kept, [lease(1)], TTL));
    });

    test("lease: 200 concurrent acquisitions against 10 admit exactly 10", async () => {
      const { store } = harness();
      const results = await admitMany(store, tenant(), [lease(10)], 200);
      assert.equal(results.filter((r) => r.ok).length, 10);
    });

    test("repeat: refuses past `limit` identical requests until the window started by the first ends", async () => {
      const h = harness();
      const t = tenant();
      for (let i = 0; i < 3; i++) granted(await h.store.admit(t, [repeat(3)], TTL));
      const loop = refused(await h.store.admit(t, [repeat(3)], TTL));
      assert.equal(loop.used, 3);
      assert.ok(loop.retryAfterMs > 0 && loop.retryAfterMs <= LONG, `retryAfterMs ${loop.retryAfterMs}`);
      granted(await h.store.admit(t, [repeat(3, LONG, "fp:other")], TTL));
      granted(await h.store.admit(t, [repeat(1, SHORT, "fp:short")], TTL));
      refused(await h.store.admit(t, [repeat(1, SHORT, "fp:short")], TTL));
      await h.advance(SHORT + 50);
      granted(await h.store.admit(t, [repeat(1, SHORT, "fp:short")], TTL));
    });

    test("repeat: 200 concurrent identical requests against 3 admit exactly 3", async () => {
      const { store } = harness();
      const results = await admitMany(store, tenant(), [repeat(3)], 200);
      assert.equal(results.filter((r) => r.ok).length, 3);
    });

    test("all or nothing: a refused admission takes nothing from the checks that passed", async () => {
      const { store } = harness();
      const t = tenant();
      const checks = [repeat(5), rate(5), lease(5), budget(1000, 100), budget(100, 200, YEAR, "k:key_1:tpm")];
      const no = refused(await store.admit(t, checks, TTL));
      assert.equal(no.failed, 4);
      for (let i = 0; i < 5; i++) granted(await store.admit(t, checks.slice(0, 4), TTL));
      assert.equal(refused(await store.admit(t, checks.slice(0, 1), TTL)).used, 5);
      assert.equal(refused(await store.admit(t, checks.slice(1, 2), TTL)).used, 5);
      assert.equal(refused(await store.admit(t, checks.slice(2, 3), TTL)).used, 5);
      assert.equal(refused(await store.admit(t, [budget(1000, 501)], TTL)).used, 500);
    });

    test("tenants are isolated: the same keys of two tenants count apart", async () => {
      const { store } = harness();
      const [a, b] = [tenant(), tenant()];
      granted(await store.admit(a, [rate(1), budget(10, 10)], TTL));
      refused(await store.admit(a, [rate(1)], TTL));
      granted(await store.admit(b, [rate(1), budget(10, 10)], TTL));
    });

    test("throttled: lists the refused checks of the tenants asked about, most refused first", async () => {
      const { store } = harness();
      const [a, b, calm] = [tenant(), tenant(), tenant()];
      granted(await store.admit(a, [rate(1)], TTL));
      for (let i = 0; i < 3; i++) refused(await store.admit(a, [rate(1)], TTL));
      granted(await store.admit(b, [repeat(1)], TTL));
      refused(await store.admit(b, [repeat(1)], TTL));
      granted(await store.admit(calm, [rate(1)], TTL));
      assert.deepEqual(await store.throttled([calm, b, a]), [
        { tenant: a, label: "tenant/rps", denials: 3 },
        { tenant: b, label: "tenant/runaway", denials: 1 },
      ]);
      assert.deepEqual(await store.throttled([calm]), []);
    });

    test("refuses input that would break the key layout, and records nothing for it", async () => {
      const { store } = harness();
      const t = tenant();
      await assert.rejects(Promise.resolve(store.admit("a}{b", [rate(1)], TTL)), /hash tag/);
      await assert.rejects(Promise.resolve(store.admit(t, [budget(10, 1.5)], TTL)), /integer/);
      await assert.rejects(Promise.resolve(store.admit(t, [rate(0)], TTL)), /positive integer/);
      await assert.rejects(Promise.resolve(store.admit(t, [rate(1)], 0)), /holdTtlMs/);
      granted(await store.admit(t, [rate(1), budget(10, 10)], TTL));
    });

    test("an admission without checks is granted and settles to nothing", async () => {
      const { store } = harness();
      const grant = granted(await store.admit(tenant(), [], TTL));
      assert.deepEqual(grant.holds, []);
      await store.settle(grant, { tokens: 5 });
    });
  });
}
