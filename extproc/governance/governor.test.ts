import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Writable } from "node:stream";
import { pino } from "pino";
import { toErrorResponse, type GatewayError } from "../../common/errors.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import { MemoryLimiter } from "../store/memory-limiter.ts";
import type { LimiterStore } from "../store/limiter.ts";
import { Governor, type AdmitDecision, type AdmitRequest, type Ticket } from "./governor.ts";
import type { CallEstimate } from "./limits.ts";
import type { ApiKeyRecord, Caller, Limits } from "./model.ts";
import { requestFingerprint } from "./runaway.ts";

const RUNAWAY = { enable: true, window_ms: 10_000, max_identical: 3 };
const SMALL: CallEstimate = { inputTokens: 100, maxOutputTokens: 500, costUsd: 0.01 };

function caller(limits: Limits, options: { key?: Limits | null; keyId?: string; degrade?: boolean } = {}): Caller {
  const key: ApiKeyRecord | undefined =
    options.key === undefined
      ? undefined
      : {
          id: options.keyId ?? "key_a",
          role: "call",
          tenant: "shop",
          name: "web",
          prefix: "gbx_call_Ab12",
          hash: "0",
          created_at: "",
          created_by: "",
          ...(options.key && { limits: options.key }),
        };
  return { tenant: { id: "shop", limits, degrade_to_edge: options.degrade ?? false, source: "config" }, ...(key && { key }), via: key ? "key" : "principal" };
}

/** A Governor on a memory store whose clock the test moves (starts 2026-01-01T20:00:00Z). */
function setup(holdTtlMs?: number) {
  const clock = { now: Date.UTC(2026, 0, 1, 20) };
  const governor = new Governor({ store: new MemoryLimiter(() => clock.now), runaway: RUNAWAY, logger: silentLogger(), ...(holdTtlMs && { holdTtlMs }) });
  const admit = (c: Caller, overrides: Partial<AdmitRequest> = {}) =>
    governor.admit({ caller: c, model: "gpt-4.1", estimate: SMALL, target: "cloud", ...overrides });
  return { clock, governor, admit };
}

function admitted(decision: AdmitDecision): Ticket {
  assert.ok(decision.ok, decision.ok ? "" : `refused: ${decision.error.message}`);
  return decision.ticket;
}

function refusedWith(decision: AdmitDecision, code: string): GatewayError {
  assert.ok(!decision.ok, "expected a refusal");
  assert.equal(decision.error.code, code, decision.error.message);
  assert.equal(decision.error.status, 429);
  assert.equal(decision.error.type, "rate_limit_error");
  return decision.error;
}

test("no limits and no fingerprint: admitted without asking the store", async () => {
  const failing: LimiterStore = {
    admit: () => Promise.reject(new Error("store called")),
    settle: () => Promise.reject(new Error("store called")),
    renew: () => Promise.reject(new Error("store called")),
    throttled: () => Promise.reject(new Error("store called")),
  };
  const governor = new Governor({ store: failing, runaway: RUNAWAY, logger: silentLogger() });
  const ticket = admitted(await governor.admit({ caller: caller({}), model: "m", estimate: SMALL, target: "cloud" }));
  await ticket.settle({ inputTokens: 1, outputTokens: 1, costUsd: 1 });
  governor.close();
});

test("requests/s: a 429 naming the limit and the tenant, OpenAI-shaped, with retry-after and x-ratelimit-*", async () => {
  const { governor, admit } = setup();
  const shop = caller({ requests_per_second: 2 });
  const first = admitted(await admit(shop));
  assert.equal(first.headers["x-ratelimit-limit-requests"], "2");
  assert.equal(first.headers["x-ratelimit-remaining-requests"], "1");
  admitted(await admit(shop));
  const error = refusedWith(await admit(shop), "rate_limit_requests_per_second");
  assert.match(error.message, /tenant 'shop': 2 requests per second/);
  assert.deepEqual(error.headers, {
    "retry-after": "1",
    "x-gearbox-limit": "tenant/requests_per_second",
    "x-ratelimit-limit-requests": "2",
    "x-ratelimit-remaining-requests": "0",
    "x-ratelimit-reset-requests": "1s",
  });
  const response = toErrorResponse(error, "req-1");
  assert.equal(response.status, 429);
  assert.equal(response.headers["retry-after"], "1");
  const body = JSON.parse(response.body.toString()) as { error: { type: string; code: string; message: string } };
  assert.equal(body.error.type, "rate_limit_error");
  assert.equal(body.error.code, "rate_limit_requests_per_second");
  governor.close();
});

test("a key's limit refuses naming the key, and the tenant's reservation is not kept", async () => {
  const { governor, admit } = setup();
  const estimate = { inputTokens: 1000, maxOutputTokens: 500, costUsd: 0 };
  const error = refusedWith(
    await admit(caller({ tokens_per_minute: 10_000 }, { key: { tokens_per_minute: 1_000 } }), { estimate }),
    "rate_limit_tokens_per_minute",
  );
  assert.match(error.message, /key 'key_a' \(gbx_call_Ab12…\) of tenant 'shop'/);
  assert.equal(error.headers["x-gearbox-limit"], "key:key_a/tokens_per_minute");
  // The whole tenant budget is still there for another key.
  admitted(
    await admit(caller({ tokens_per_minute: 10_000 }, { key: null, keyId: "key_b" }), { estimate: { inputTokens: 9_500, maxOutputTokens: 500, costUsd: 0 } }),
  );
  governor.close();
});

test("tokens/min: the estimate is reserved, then replaced by the real usage; the next minute starts afresh", async () => {
  const { clock, governor, admit } = setup();
  const shop = caller({ tokens_per_minute: 1_000 });
  const streaming = admitted(await admit(shop));
  assert.equal(streaming.headers["x-ratelimit-remaining-tokens"], "400");
  const error = refusedWith(await admit(shop), "rate_limit_tokens_per_minute");
  assert.match(error.message, /1000 tokens per minute \(600 used or reserved; this request may use up to 600\)/);
  await streaming.settle({ inputTokens: 100, outputTokens: 50, costUsd: 0 });
  const second = admitted(await admit(shop));
  const small = { inputTokens: 300, maxOutputTokens: 0, costUsd: 0 };
  refusedWith(await admit(shop, { estimate: small }), "rate_limit_tokens_per_minute");
  // An overrun of the estimate is booked too: 150 + 900 used, nothing left this minute.
  await second.settle({ inputTokens: 100, outputTokens: 800, costUsd: 0 });
  refusedWith(await admit(shop, { estimate: { inputTokens: 1, maxOutputTokens: 0, costUsd: 0 } }), "rate_limit_tokens_per_minute");
  clock.now += 60_000;
  admitted(await admit(shop));
  governor.close();
});

test("tokens/min: a request larger than the whole limit is told so", async () => {
  const { governor, admit } = setup();
  const error = refusedWith(await admit(caller({ tokens_per_minute: 500 })), "rate_limit_tokens_per_minute");
  assert.match(error.message, /may use up to 600 tokens, more than the limit of tenant 'shop' \(500 tokens per minute\)/);
  governor.close();
});

test("concurrency: a released call frees its slot; a second release frees nothing more", async () => {
  const { governor, admit } = setup();
  const shop = caller({ max_concurrent: 1 });
  const first = admitted(await admit(shop));
  const error = refusedWith(await admit(shop), "concurrency_limit");
  assert.equal(error.headers["retry-after"], "1");
  assert.match(error.message, /tenant 'shop': 1 requests in flight/);
  await first.release();
  await first.release();
  await first.settle({ inputTokens: 1, outputTokens: 1, costUsd: 0 });
  admitted(await admit(shop));
  refusedWith(await admit(shop), "concurrency_limit");
  governor.close();
});

test("daily cost cap: cloud calls are refused until 00:00 UTC; edge calls are not capped", async () => {
  const { clock, governor, admit } = setup();
  const shop = caller({ daily_cost_usd: 1 });
  const big = { inputTokens: 1000, maxOutputTokens: 1000, costUsd: 0.6 };
  await admitted(await admit(shop, { estimate: big })).settle({ inputTokens: 1000, outputTokens: 900, costUsd: 0.7 });
  const error = refusedWith(await admit(shop, { estimate: { ...big, costUsd: 0.4 } }), "daily_cost_cap");
  assert.match(error.message, /tenant 'shop': \$1\.00 per UTC day \(\$0\.7000 spent or reserved; this call to gpt-4\.1 may cost up to \$0\.4000\)/);
  assert.equal(error.headers["retry-after"], String(4 * 3600));
  assert.equal(error.headers["x-ratelimit-reset-cost-usd"], "4h0m0s");
  assert.equal(error.headers["x-ratelimit-remaining-cost-usd"], "0.3");
  admitted(await admit(shop, { estimate: { ...big, costUsd: 0.4 }, target: "edge" }));
  clock.now += 4 * 3600 * 1000;
  admitted(await admit(shop, { estimate: { ...big, costUsd: 0.4 } }));
  governor.close();
});

test("degrade_to_edge: a cost or token cap answers degradeToEdge (with the error); other limits do not", async () => {
  const { governor, admit } = setup();
  const degrading = caller({ daily_cost_usd: 0.01, requests_per_second: 2 }, { degrade: true });
  admitted(await admit(degrading));
  const capped = await admit(degrading);
  assert.ok(!capped.ok && capped.degradeToEdge === true);
  assert.equal(capped.error.code, "daily_cost_cap");
  admitted(await admit(degrading, { target: "edge" }));
  const limited = await admit(degrading, { target: "edge" });
  assert.ok(!limited.ok && limited.degradeToEdge === undefined);
  assert.equal(limited.error.code, "rate_limit_requests_per_second");
  const strict = await admit(caller({ daily_cost_usd: 0.01 }), { estimate: { ...SMALL, costUsd: 0.02 } });
  assert.ok(!strict.ok && strict.degradeToEdge === undefined);
  governor.close();
});

test("runaway: past max_identical identical requests in the window are refused; other requests pass", async () => {
  const { clock, governor, admit } = setup();
  const shop = caller({});
  const fingerprint = requestFingerprint("shop", '{"model":"gpt-4.1","messages":[{"role":"user","content":"retry me"}]}');
  for (let i = 0; i < 3; i++) admitted(await admit(shop, { fingerprint }));
  const refusal = await admit(shop, { fingerprint });
  assert.ok(!refusal.ok && refusal.runaway === true, "a runaway refusal says so (the processor may replay instead)");
  const error = refusedWith(refusal, "runaway_request_loop");
  assert.match(error.message, /tenant 'shop' sent more than 3 identical requests within 10 s; this one was not sent to the model/);
  const named = refusedWith(await admit(shop, { fingerprint, repeater: "key 'key_a' of tenant 'shop'" }), "runaway_request_loop");
  assert.match(named.message, /key 'key_a' of tenant 'shop' sent more than 3 identical requests/);
  assert.equal(error.headers["retry-after"], "10");
  admitted(await admit(shop, { fingerprint: requestFingerprint("shop", "another request") }));
  clock.now += 10_000;
  admitted(await admit(shop, { fingerprint }));
  const off = new Governor({ store: new MemoryLimiter(() => clock.now), runaway: { ...RUNAWAY, enable: false }, logger: silentLogger() });
  for (let i = 0; i < 5; i++) admitted(await off.admit({ caller: shop, model: "m", estimate: SMALL, fingerprint, target: "cloud" }));
  off.close();
  governor.close();
});

test("runaway: each ticket says how many identical requests the window still admits; replays exist unless turned off", async () => {
  const { governor, admit } = setup();
  const fingerprint = requestFingerprint("shop", "count me");
  const left = [];
  for (let i = 0; i < 3; i++) left.push(admitted(await admit(caller({}), { fingerprint })).repeatsLeft);
  assert.deepEqual(left, [2, 1, 0]);
  assert.equal(admitted(await admit(caller({}))).repeatsLeft, undefined, "no fingerprint, no runaway check");
  assert.ok(governor.replays);
  governor.close();
  for (const runaway of [
    { ...RUNAWAY, replay: false },
    { ...RUNAWAY, enable: false },
  ]) {
    const off = new Governor({ store: new MemoryLimiter(), runaway, logger: silentLogger() });
    assert.equal(off.replays, undefined);
    off.close();
  }
});

test("success headers report the scope with the least left", async () => {
  const { governor, admit } = setup();
  const ticket = admitted(
    await admit(caller({ requests_per_second: 10, tokens_per_minute: 5_000 }, { key: { requests_per_second: 3, tokens_per_minute: 50_000 } })),
  );
  assert.deepEqual(ticket.headers, {
    "x-ratelimit-limit-requests": "3",
    "x-ratelimit-remaining-requests": "2",
    "x-ratelimit-limit-tokens": "5000",
    "x-ratelimit-remaining-tokens": "4400",
  });
  governor.close();
});

test("throttled: names the tenant, the key and the limit that refused", async () => {
  const { governor, admit } = setup();
  const keyed = caller({}, { key: { requests_per_second: 1 } });
  admitted(await admit(keyed));
  refusedWith(await admit(keyed), "rate_limit_requests_per_second");
  refusedWith(await admit(keyed), "rate_limit_requests_per_second");
  assert.deepEqual(await governor.throttled(["shop", "other"]), [{ tenant: "shop", key: "key_a", limit: "requests_per_second", denials: 2 }]);
  governor.close();
});

test("open tickets' holds are renewed until settled; without renewal they lapse", async () => {
  const store = new MemoryLimiter();
  const shop = caller({ max_concurrent: 1 });
  const request = { caller: shop, model: "m", estimate: SMALL, target: "cloud" } as const;
  const renewing = new Governor({ store, runaway: RUNAWAY, logger: silentLogger(), holdTtlMs: 600 });
  const open = admitted(await renewing.admit(request));
  await sleep(1_500);
  refusedWith(await renewing.admit(request), "concurrency_limit");
  await open.settle({ inputTokens: 1, outputTokens: 1, costUsd: 0 });
  const next = admitted(await renewing.admit(request));
  renewing.close();
  await sleep(1_000);
  // `next` was never settled and no longer renewed: its lease lapsed.
  admitted(await renewing.admit(request));
  await next.release();
});

test("a ticket never settled is renewed only up to maxHoldMs, then lapses", async () => {
  const request = { caller: caller({ max_concurrent: 1 }), model: "m", estimate: SMALL, target: "cloud" } as const;
  const governor = new Governor({ store: new MemoryLimiter(), runaway: RUNAWAY, logger: silentLogger(), holdTtlMs: 300, maxHoldMs: 500 });
  admitted(await governor.admit(request));
  refusedWith(await governor.admit(request), "concurrency_limit");
  await sleep(1_500);
  admitted(await governor.admit(request));
  governor.close();
});

test("a settlement the store fails is logged, not thrown", async () => {
  const lines: string[] = [];
  const logger = pino({ level: "warn" }, new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString()), done()) }));
  const memory = new MemoryLimiter();
  const store: LimiterStore = {
    admit: (...a) => memory.admit(...a),
    settle: () => Promise.reject(new Error("redis gone")),
    renew: () => Promise.resolve(),
    throttled: () => Promise.resolve([]),
  };
  const governor = new Governor({ store, runaway: RUNAWAY, logger });
  const ticket = admitted(await governor.admit({ caller: caller({ max_concurrent: 2 }), model: "m", estimate: SMALL, target: "cloud" }));
  await ticket.settle({ inputTokens: 1, outputTokens: 1, costUsd: 0 });
  assert.equal(lines.length, 1);
  assert.match(lines[0] ?? "", /settlement failed/);
  assert.match(lines[0] ?? "", /redis gone/);
  governor.close();
});
