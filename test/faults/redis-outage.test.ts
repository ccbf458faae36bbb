/**
 * Fault suite, short form: Redis stopped or frozen under traffic never fails a request. The real
 * `gearbox extproc` runs with `REDIS_URL` pointing at a redis-server of the test's own (persisted,
 * so its restart keeps the keys), a tenant with a call key and a requests-per-second limit, and
 * the exact cache on. Redis stays away longer than the key cache's freshness (5 s), so every
 * store on the request path has to answer without it. The bench (`npm run bench:faults`) runs
 * the 10 s, 50 req/s version; this one asserts counts only.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { RedisChild } from "../support/redis-child.ts";
import { PRIMARY_MODEL, startGateway, startLab } from "./lab.ts";
import { chat, send, type Sample } from "./traffic.ts";

/** Past the key cache's and the tenant directory's freshness, so their next reads need Redis. */
const PAST_FRESHNESS_MS = 5_500;

async function setup(t: TestContext) {
  const dir = mkdtempSync(path.join(tmpdir(), "gearbox-faults-"));
  const lab = await startLab(dir);
  const redis = await RedisChild.start({ persistDir: dir });
  const { gateway, headers } = await startGateway(lab, { name: "redis-outage", redis, tenantRps: 1_000, exactCache: true });
  t.after(async () => {
    await gateway.stop();
    await redis.down();
    await lab.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const base = new URL(gateway.url);
  const startedAt = performance.now();
  /** `n` requests, `parallel` at a time; every fourth repeats one prompt (an exact-cache hit once stored). */
  const burst = async (label: string, n: number): Promise<Sample[]> => {
    const samples: Sample[] = [];
    for (let i = 0; i < n; i += 5) {
      const batch = Array.from({ length: Math.min(5, n - i) }, (_, j) =>
        chat(PRIMARY_MODEL, (i + j) % 4 === 0 ? "the repeated question" : `${label} question ${i + j}`, headers, { temperature: 0 }),
      );
      samples.push(...(await Promise.all(batch.map((r) => send(base, r, 10_000, startedAt)))));
    }
    return samples;
  };
  return { lab, redis, gateway, burst };
}

const causes = (samples: readonly Sample[]): Record<string, number> =>
  samples.reduce<Record<string, number>>((acc, s) => ({ ...acc, [s.cause]: (acc[s.cause] ?? 0) + 1 }), {});

void test("Redis stopped (SIGTERM) past the caches' freshness: every request succeeds, during and after", async (t) => {
  const { redis, burst, gateway } = await setup(t);
  assert.deepEqual(causes(await burst("before", 10)), { ok: 10 });
  await redis.down("SIGTERM");
  await sleep(PAST_FRESHNESS_MS);
  assert.deepEqual(causes(await burst("during", 20)), { ok: 20 }, "no request fails because Redis did");
  await redis.up();
  assert.deepEqual(causes(await burst("after", 10)), { ok: 10 });
  // The child writes its log line as the answer leaves: give the pipe a moment.
  for (let i = 0; i < 50 && gateway.logs.filter((l) => l.msg === "request").length < 40; i += 1) await sleep(100);
  const logged = gateway.logs.filter((l) => l.msg === "request");
  assert.equal(logged.length, 40, "every request is in the request log");
  assert.deepEqual(
    logged.filter((l) => l.status !== 200),
    [],
  );
});

void test("Redis frozen (SIGSTOP) past the caches' freshness: every request succeeds, during and after", async (t) => {
  const { redis, burst } = await setup(t);
  assert.deepEqual(causes(await burst("before", 10)), { ok: 10 });
  redis.signal("SIGSTOP");
  await sleep(PAST_FRESHNESS_MS);
  const during = await burst("during", 20);
  redis.signal("SIGCONT");
  assert.deepEqual(causes(during), { ok: 20 }, "no request fails because Redis did");
  assert.deepEqual(causes(await burst("after", 10)), { ok: 10 });
});
