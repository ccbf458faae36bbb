/** `LastGood` and `StoreHealth` on a store that fails, hangs and recovers on demand, with a fake clock. */
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import { pino } from "pino";
import { LastGood } from "./last-good.ts";
import { StoreHealth } from "./store-health.ts";

/** A store whose reads answer `value`, fail, or hang until released. */
class Flaky {
  mode: "up" | "down" | "hang" = "up";
  value = "v1";
  reads = 0;
  private hung: (() => void)[] = [];

  read = (): Promise<string> => {
    this.reads++;
    if (this.mode === "down") return Promise.reject(new Error("connect ECONNREFUSED"));
    if (this.mode === "hang") {
      const answer = this.value;
      return new Promise((resolve) => this.hung.push(() => resolve(answer)));
    }
    return Promise.resolve(this.value);
  };

  /** Answers the hung reads (late). */
  release(): void {
    for (const answer of this.hung.splice(0)) answer();
  }
}

function setup(options: { maxStaleMs?: number; maxEntries?: number } = {}) {
  const clock = { now: 0 };
  const lines: { level: number; msg: string }[] = [];
  const logger = pino(
    { level: "info" },
    new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string }), done()) }),
  );
  const health = new StoreHealth("tenants", logger, {
    probeEveryMs: 1_000,
    now: () => clock.now,
    meaning: { degraded: "serving last good values", healthy: "reading again" },
  });
  const values = new LastGood<string, string>({
    health,
    freshMs: 5_000,
    maxStaleMs: options.maxStaleMs ?? 60_000,
    readTimeoutMs: 30,
    ...(options.maxEntries && { maxEntries: options.maxEntries }),
    now: () => clock.now,
  });
  return { clock, lines, health, values, store: new Flaky() };
}

test("fresh values are served without a read; past freshMs the store is read again", async () => {
  const { clock, values, store } = setup();
  assert.equal(await values.get("k", store.read), "v1");
  clock.now = 4_999;
  store.value = "v2";
  assert.equal(await values.get("k", store.read), "v1");
  assert.equal(store.reads, 1);
  clock.now = 5_000;
  assert.equal(await values.get("k", store.read), "v2");
  assert.equal(store.reads, 2);
});

test("concurrent gets of one key share one read", async () => {
  const { values, store } = setup();
  const answers = await Promise.all(Array.from({ length: 20 }, () => Promise.resolve(values.get("k", store.read))));
  assert.deepEqual(new Set(answers), new Set(["v1"]));
  assert.equal(store.reads, 1);
});

test("store down: the last good value answers, Redis is skipped until the probe interval, one log line per transition", async () => {
  const { clock, lines, health, values, store } = setup();
  await values.get("k", store.read);
  store.mode = "down";
  clock.now = 6_000;
  assert.equal(await values.get("k", store.read), "v1", "the failed refresh falls back to the last good value");
  assert.equal(health.degraded, true);
  const readsWhenDown = store.reads;
  for (let i = 0; i < 50; i++) assert.equal(await values.get("k", store.read), "v1");
  assert.equal(store.reads, readsWhenDown, "degraded: no read per request");
  clock.now = 7_000;
  assert.equal(await values.get("k", store.read), "v1");
  assert.equal(store.reads, readsWhenDown + 1, "one background try per probe interval");
  assert.equal(health.stats.staleReads, 52);

  store.mode = "up";
  store.value = "v2";
  clock.now = 8_000;
  // Requests keep coming; one of them starts the background refresh that finds the store back.
  for (let i = 0; health.degraded && i < 10_000; i++) await values.get("k", store.read);
  assert.equal(health.degraded, false);
  assert.equal(await values.get("k", store.read), "v2", "the background refresh brought the new value");
  assert.deepEqual(
    lines.map((l) => [l.level, l.msg]),
    [
      [40, "tenants: Redis failed; serving last good values"],
      [30, "tenants: Redis answers again; reading again"],
    ],
  );
  assert.deepEqual({ toDegraded: health.stats.toDegraded, toHealthy: health.stats.toHealthy }, { toDegraded: 1, toHealthy: 1 });
});

test("store frozen: a read past readTimeoutMs answers the last good value; its late answer is kept", async () => {
  const { clock, health, values, store } = setup();
  await values.get("k", store.read);
  store.mode = "hang";
  store.value = "v2";
  clock.now = 6_000;
  assert.equal(await values.get("k", store.read), "v1");
  assert.equal(health.degraded, true);
  assert.ok(health.stats.errors >= 1);
  store.release();
  // The late answer is newer than the last good value: it is served (fresh, no new read).
  await new Promise((resolve) => setImmediate(resolve));
  const reads = store.reads;
  assert.equal(await values.get("k", store.read), "v2");
  assert.equal(store.reads, reads);
});

test("a key never read: the store failing is the answer; a slow store is waited for (its own timeout), not cut at readTimeoutMs", async () => {
  const { values, store } = setup();
  store.mode = "down";
  await assert.rejects(async () => values.get("never", store.read), /ECONNREFUSED/);
  store.mode = "hang";
  store.value = "late";
  const slow = values.get("slow", store.read);
  await new Promise((resolve) => setTimeout(resolve, 60));
  store.release();
  assert.equal(await slow, "late", "with nothing to fall back on, the read is the only chance");
});

test("past maxStaleMs the last good value is dropped: the read's error answers", async () => {
  const { clock, values, store } = setup({ maxStaleMs: 60_000 });
  await values.get("k", store.read);
  store.mode = "down";
  clock.now = 59_999;
  assert.equal(await values.get("k", store.read), "v1");
  clock.now = 60_001;
  await assert.rejects(async () => values.get("k", store.read), /ECONNREFUSED/);
  store.mode = "up";
  store.value = "v2";
  assert.equal(await values.get("k", store.read), "v2", "read again once the store answers");
});

test("forget drops the value and a read in flight: an answer from before the change is not kept", async () => {
  const { clock, values, store } = setup();
  await values.get("k", store.read);
  clock.now = 6_000;
  store.mode = "hang";
  const before = values.get("k", store.read);
  values.forget("k");
  store.release();
  await before;
  store.mode = "up";
  store.value = "after";
  assert.equal(await values.get("k", store.read), "after");
  // Forgotten while the store is down: nothing to fall back on.
  values.forget("k");
  store.mode = "down";
  await assert.rejects(async () => values.get("k", store.read), /ECONNREFUSED/);
});

test("bounded: past maxEntries the value refreshed longest ago goes first", async () => {
  const { values, store } = setup({ maxEntries: 2 });
  for (const k of ["a", "b", "c"]) await values.get(k, store.read);
  assert.equal(values.size, 2);
  const reads = store.reads;
  await values.get("b", store.read);
  await values.get("c", store.read);
  assert.equal(store.reads, reads);
  await values.get("a", store.read);
  assert.equal(store.reads, reads + 1, "a was evicted");
});

test("undefined is a value: an unknown key is remembered and served while the store fails", async () => {
  const { clock } = setup();
  let reads = 0;
  let down = false;
  const read = () => (reads++, down ? Promise.reject(new Error("down")) : Promise.resolve(undefined));
  const unknown = new LastGood<string, string | undefined>({ health: new StoreHealth("keys", pino({ level: "silent" })), now: () => clock.now });
  assert.equal(await unknown.get("x", read), undefined);
  assert.equal(await unknown.get("x", read), undefined);
  assert.equal(reads, 1);
  down = true;
  clock.now = 10_000;
  assert.equal(await unknown.get("x", read), undefined);
  assert.equal(reads, 2, "the failed refresh fell back to the remembered undefined");
});
