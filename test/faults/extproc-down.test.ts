/**
 * Fault suite, short form: the ext_proc service (the real `gearbox extproc` process) killed and
 * restarted behind the Envoy harness. With `failure_mode_allow: true` calls go on without Gearbox
 * while it is down (straight to the route's cluster, unprocessed); with `false` they fail with
 * Envoy's `status_on_error` (500) local reply. Once it is back, calls are processed again.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startEnvoy, type EnvoyHarness } from "../harness/envoy.ts";
import { shippedEnvoySettings } from "../support/envoy-settings.ts";
import { PRIMARY_MODEL, startGateway, startLab, type Lab } from "./lab.ts";
import { chat, send, type Sample } from "./traffic.ts";

function harness(lab: Lab, address: string, failureModeAllow: boolean): Promise<EnvoyHarness> {
  const shipped = shippedEnvoySettings();
  return startEnvoy({
    extProc: { ...shipped.extProc, address, failureModeAllow },
    routes: [{ header: "x-gearbox-upstream", value: "openai", cluster: "openai" }],
    defaultCluster: "openai",
    clusters: { openai: { url: lab.primary.url } },
  });
}

void test("ext_proc down: failure_mode_allow true passes calls through unprocessed, false fails them with 500; both process again after the restart", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), "gearbox-faults-"));
  const lab = await startLab(dir);
  const { gateway } = await startGateway(lab, { name: "extproc-down" });
  const open = await harness(lab, gateway.extProcAddress, true);
  const closed = await harness(lab, gateway.extProcAddress, false);
  t.after(async () => {
    await Promise.all([open.close(), closed.close()]);
    await gateway.stop();
    await lab.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const startedAt = performance.now();
  let n = 0;
  const call = (envoy: EnvoyHarness): Promise<Sample> => send(new URL(envoy.url), chat(PRIMARY_MODEL, `ext_proc question ${n++}`), 10_000, startedAt);

  for (const envoy of [open, closed]) {
    const up = await call(envoy);
    assert.equal(up.cause, "ok");
    assert.equal(up.route, "cloud", "processed by Gearbox while it runs");
  }

  await gateway.stop("SIGKILL");
  lab.resetCounts();
  const passed = await Promise.all([1, 2, 3].map(() => call(open)));
  assert.deepEqual(
    passed.map((s) => [s.cause, s.route]),
    [
      ["ok", undefined],
      ["ok", undefined],
      ["ok", undefined],
    ],
    "fail-open: answered by the upstream, without Gearbox",
  );
  assert.equal(lab.primary.calls, 3);
  const refused = await Promise.all([1, 2, 3].map(() => call(closed)));
  assert.deepEqual(
    refused.map((s) => s.status),
    [500, 500, 500],
    "fail-closed: Envoy's status_on_error",
  );
  assert.equal(lab.primary.calls, 3, "nothing reached the upstream fail-closed");

  await gateway.start();
  for (const envoy of [open, closed]) {
    // The side-stream channel reconnects with back-off; wait for the first processed answer, then count.
    let processed = false;
    for (let i = 0; i < 40 && !processed; i += 1) {
      const s = await call(envoy);
      processed = s.route === "cloud";
      if (!processed) await sleep(250);
    }
    assert.ok(processed, "Gearbox processes calls again after its restart");
    const after = await Promise.all([1, 2, 3, 4, 5].map(() => call(envoy)));
    assert.deepEqual(
      after.map((s) => [s.cause, s.route]),
      Array.from({ length: 5 }, () => ["ok", "cloud"]),
    );
  }
});
