/**
 * The device API's cost, against the real `gearbox extproc` process (own Redis, tenant + call key;
 * `test/support/device-stack.ts`), from this process over loopback:
 * - decision round trip: `POST /v1/device/decide` for a connected device, one at a time on a
 *   keep-alive connection (key lookup, parse, decideRoute, admission, held decision), each
 *   followed by its outcome (untimed) so nothing piles up; p50/p99 of the client-side time. The
 *   baseline in the same run: `GET /healthz` of the same process on the same connection, timed
 *   between every two decisions (what any round trip costs on this machine). Twice: tenant
 *   without limits (admission without a store call), then a tenant with `requests_per_second` and
 *   `max_concurrent` (each admission one Redis round trip, held until the outcome settles it);
 * - reconnect and resume after a gateway restart: the TypeScript SDK's channel (back-off base
 *   50 ms, max 300 ms), from the old process's exit to the device's welcome from the new one
 *   (which includes the new process's start);
 * - memory per 1,000 connected devices: the gateway's RSS and heap (its own /metrics) with 0 and
 *   `devices` SSE channels open, each on its own TCP connection;
 * - CPU per heartbeat: the gateway's `process_cpu_seconds_total` over `beats` heartbeats, sent
 *   8 at a time.
 *
 * `node --import tsx bench/devices.bench.ts [decisions=2000] [devices=1000] [beats=5000]`
 * With `DEVICES_BENCH_PROFILE=<dir>` the gateway processes write CPU profiles there
 * (`bench/cpu-profile.mjs`; `--cpu-prof` itself is not allowed in NODE_OPTIONS).
 */
import http from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { DeviceModels, Gearbox } from "../sdk/typescript/src/index.ts";
import { startDeviceStack, type DeviceStack, type DeviceStackOptions } from "../test/support/device-stack.ts";

const [decisions = 2000, devices = 1000, beats = 5000] = process.argv.slice(2).map(Number);
const ASK = JSON.stringify({
  model: "gpt-4.1-nano",
  messages: [{ role: "user", content: "Summarize this in one line: the cat sat on the mat." }],
  max_tokens: 8,
});
const profile = process.env.DEVICES_BENCH_PROFILE;
const stackOptions: DeviceStackOptions = {
  threshold: 0,
  heartbeatMs: 30_000,
  expiryMs: 120_000,
  ...(profile && {
    env: { NODE_OPTIONS: `--import ${new URL("./cpu-profile.mjs", import.meta.url).pathname}`, GEARBOX_CPU_PROFILE_DIR: profile },
  }),
};
let stack: DeviceStack = await startDeviceStack(stackOptions);
const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
const headers = (device?: string) => ({
  "content-type": "application/json",
  authorization: `Bearer ${stack.callKey}`,
  ...(device && { "x-gearbox-device-id": device }),
});

function post(path: string, body: string, device?: string, method = "POST"): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${stack.url}${path}`, { method, agent, headers: headers(device) }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** Opens one SSE channel on its own connection; resolves with its session once welcomed. */
function openChannel(id: string): Promise<{ session: string; req: http.ClientRequest }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${stack.url}/v1/device/connect`, { method: "POST", agent: false, headers: headers() }, (res) => {
      let buf = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        buf += c;
        const m = /"session":"([^"]+)"/.exec(buf);
        if (m?.[1]) resolve({ session: m[1], req });
      });
    });
    req.on("error", reject);
    req.end(JSON.stringify({ device_id: id, engines: ["llama.cpp"], models: [{ id: "tiny", engine: "llama.cpp" }] }));
  });
}

const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;
const cpuSeconds = async () => {
  const text = await (await fetch(`http://127.0.0.1:${stack.gateway.ports.metrics}/metrics`)).text();
  return Number(/^gearbox_process_cpu_seconds_total (\S+)/m.exec(text)?.[1]);
};

try {
  // Decisions, against a trivial round trip of the same process in the same loop.
  const decisionFigures = async (label: string): Promise<{ session: string; req: http.ClientRequest }> => {
    const main = await openChannel("bench-main");
    const times: number[] = [];
    const outcomes: number[] = [];
    const baseline: number[] = [];
    for (let i = 0; i < decisions + 200; i++) {
      const t = performance.now();
      const d = await post("/v1/device/decide", ASK, "bench-main");
      const dt = performance.now() - t;
      if (d.status !== 200) throw new Error(`decide ${d.status}: ${d.body}`);
      const decided = JSON.parse(d.body) as { target: string; decision_id: string };
      if (decided.target !== "device") throw new Error(`not a device decision: ${d.body}`);
      const o = performance.now();
      const reported = await post(
        "/v1/device/outcome",
        JSON.stringify({ decision_id: decided.decision_id, confidence: 0.9, usage: { prompt_tokens: 12, completion_tokens: 8 } }),
      );
      const dout = performance.now() - o;
      if (reported.status !== 200) throw new Error(`outcome ${reported.status}: ${reported.body}`);
      const h = performance.now();
      const health = await post("/healthz", "", undefined, "GET");
      const dh = performance.now() - h;
      if (health.status !== 200) throw new Error(`healthz ${health.status}`);
      if (i < 200) continue; // the first 200 warm up
      times.push(dt);
      outcomes.push(dout);
      baseline.push(dh);
    }
    for (const [what, xs] of [
      ["decision round trip", times],
      ["outcome round trip (kept)", outcomes],
      ["baseline GET /healthz", baseline],
    ] as const) {
      xs.sort((a, b) => a - b);
      console.log(
        `${label}: ${what} (${decisions}): p50 ${pct(xs, 50).toFixed(3)} ms, p99 ${pct(xs, 99).toFixed(3)} ms, max ${(xs.at(-1) ?? NaN).toFixed(3)} ms`,
      );
    }
    return main;
  };
  const unlimited = stack;
  stack = await startDeviceStack({ ...stackOptions, limits: { requests_per_second: 100_000, max_concurrent: 1_000 } });
  try {
    (await decisionFigures("tenant with limits (admission on Redis)")).req.destroy();
  } finally {
    await stack.close();
    stack = unlimited;
  }
  const main = await decisionFigures("tenant without limits");

  // CPU per heartbeat.
  const cpu0 = await cpuSeconds();
  let sent = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (sent < beats) {
        sent++;
        const r = await post("/v1/device/heartbeat", JSON.stringify({ session: main.session, in_flight: 0 }));
        if (r.status !== 200) throw new Error(`heartbeat ${r.status}`);
      }
    }),
  );
  const cpu1 = await cpuSeconds();
  console.log(`heartbeat: ${(((cpu1 - cpu0) / beats) * 1e6).toFixed(1)} µs of gateway CPU each (${beats} heartbeats, process_cpu_seconds_total)`);
  main.req.destroy();

  // Memory per connected devices.
  await sleep(1000);
  const before = await stack.gateway.memory();
  const open: http.ClientRequest[] = [];
  for (let i = 0; i < devices; i += 50) {
    const batch = await Promise.all(Array.from({ length: Math.min(50, devices - i) }, (_, j) => openChannel(`bench-${i + j}`)));
    open.push(...batch.map((b) => b.req));
  }
  await sleep(2000);
  const after = await stack.gateway.memory();
  console.log(
    `memory, ${devices} devices connected: RSS ${before.rssMb.toFixed(1)} → ${after.rssMb.toFixed(1)} MB (+${(after.rssMb - before.rssMb).toFixed(1)}), heap ${before.heapMb.toFixed(1)} → ${after.heapMb.toFixed(1)} MB (+${(after.heapMb - before.heapMb).toFixed(1)})`,
  );
  for (const r of open) r.destroy();

  // Reconnect and resume after a restart.
  const sdk = new Gearbox({
    baseURL: `${stack.url}/v1`,
    apiKey: stack.callKey,
    deviceId: "bench-sdk",
    models: new DeviceModels([]),
    backoff: { baseMs: 50, maxMs: 300 },
  });
  await sdk.connect();
  const resumed: number[] = [];
  for (let i = 0; i < 5; i++) {
    const welcomes = sdk.channel.connections;
    await stack.gateway.stop();
    const restart = performance.now();
    await stack.restart();
    const serving = performance.now();
    while (sdk.channel.connections === welcomes) await sleep(2);
    const done = performance.now();
    resumed.push(done - restart);
    // `serving` is seen by polling /healthz every 100 ms, so the device may resume "before" it.
    console.log(
      `restart ${i + 1}: old process gone → new one serving ${(serving - restart).toFixed(0)} ms (100 ms polls), → device resumed ${(done - restart).toFixed(0)} ms`,
    );
  }
  resumed.sort((a, b) => a - b);
  console.log(`old process gone → device resumed: median ${pct(resumed, 50).toFixed(1)} ms, max ${(resumed.at(-1) ?? NaN).toFixed(1)} ms (5 restarts)`);
  await sdk.close();
} finally {
  agent.destroy();
  await stack.close();
}
