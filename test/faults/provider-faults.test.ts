/**
 * Fault suite, short form: a provider failing under the real `gearbox extproc` (front door), with
 * a healthy fallback configured (`gpt-4o-mini` → `deepseek-chat` on another provider) and short
 * timeouts. Counts only: who answered, how many calls each provider got, what the client and the
 * request log saw. The bench (`npm run bench:faults`) runs the long versions with figures.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { GatewayProcess } from "../support/gateway-process.ts";
import { PRIMARY_MODEL, startGateway, startLab, type Lab } from "./lab.ts";
import { chat, send, type Sample } from "./traffic.ts";

const dir = mkdtempSync(path.join(tmpdir(), "gearbox-faults-"));
let lab: Lab;
let gateway: GatewayProcess;
let n = 0;
const startedAt = performance.now();

before(async () => {
  lab = await startLab(dir);
  // `open_ms` long enough that the breaker stays open for the whole storm test.
  const resilience = "  breaker: { failure_threshold: 5, open_ms: 60000 }\n";
  ({ gateway } = await startGateway(lab, {
    name: "provider-faults",
    fallback: true,
    resilience,
    timeouts: { connect_ms: 1_000, first_byte_ms: 2_000, idle_ms: 1_000, total_ms: 8_000 },
  }));
});

after(async () => {
  await gateway.stop();
  await lab.close();
  rmSync(dir, { recursive: true, force: true });
});

const call = (options: { stream?: boolean } = {}): Promise<Sample> =>
  send(new URL(gateway.url), chat(PRIMARY_MODEL, `provider fault question ${n++}`, {}, options), 15_000, startedAt);

/** The request log lines written so far (the child writes each as its answer leaves: wait for `count`). */
async function requestLogs(count: number): Promise<Record<string, unknown>[]> {
  for (let i = 0; i < 50 && gateway.logs.filter((l) => l.msg === "request").length < count; i += 1) await sleep(100);
  return gateway.logs.filter((l) => l.msg === "request");
}

void test("a reset mid-stream reaches the client as an error (not a clean end) and is logged as a failure", async () => {
  lab.primary.setFault({ kind: "reset", afterBytes: 400 });
  lab.resetCounts();
  const seen = gateway.logs.filter((l) => l.msg === "request").length;
  const sample = await call({ stream: true });
  lab.primary.setFault({ kind: "none" });
  assert.equal(lab.primary.answers.reset, 1);
  assert.notEqual(sample.cause, "ok");
  assert.notEqual(sample.cause, "stream cut", "a stream cut by the provider must not end like a complete one");
  const [line] = (await requestLogs(seen + 1)).slice(seen);
  assert.ok(line, "the request is in the request log");
  assert.ok(
    line.status !== 200 || line.error_code !== undefined,
    `logged as a failure: ${JSON.stringify({ status: line.status, error_code: line.error_code })}`,
  );
});

void test("a 429 storm with retry-after: every call is answered by the fallback, marked x-gearbox-fallback", async () => {
  lab.primary.setFault({ kind: "status", status: 429, retryAfterSeconds: 1 });
  lab.resetCounts();
  const samples = await Promise.all(Array.from({ length: 10 }, () => call()));
  lab.primary.setFault({ kind: "none" });
  assert.deepEqual(
    samples.map((s) => s.cause),
    samples.map(() => "ok"),
  );
  assert.equal(samples.filter((s) => s.fallback !== undefined).length, 10);
  assert.equal(lab.backup.calls, 10);
});

void test("a 500 storm: the breaker opens, so the failing provider stops being called, and every call succeeds", async () => {
  lab.primary.setFault({ kind: "status", status: 500 });
  lab.resetCounts();
  const samples: Sample[] = [];
  for (let i = 0; i < 30; i += 1) samples.push(await call());
  lab.primary.setFault({ kind: "none" });
  assert.deepEqual(
    samples.map((s) => s.cause),
    samples.map(() => "ok"),
  );
  assert.ok(lab.primary.calls < 15, `the open breaker spares the primary (${lab.primary.calls} calls for 30 requests)`);
});

void test("a provider that hangs after its headers: the idle timeout frees the call and the fallback answers", async () => {
  lab.primary.setFault({ kind: "hang-after-headers" });
  lab.resetCounts();
  const sample = await call();
  lab.primary.setFault({ kind: "none" });
  assert.equal(sample.cause, "ok");
  assert.ok(sample.fallback !== undefined);
  assert.equal(lab.backup.calls, 1);
});
