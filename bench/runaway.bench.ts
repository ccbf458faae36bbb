/**
 * Runaway protection through the real front door, on the defaults a new user gets (no tenants:
 * every caller is tenant `default`; `runaway: { window_ms: 10000, max_identical: 10 }`), against
 * the OpenAI emulator, which counts the calls that reach it. Loopback only, bounded counts.
 *
 *   one caller looping    one client (one source address) sends one identical request again
 *                         and again (`--loop` requests spread over `--seconds`, 8 in flight):
 *                         the provider should see max_identical per window; the rest are
 *                         answered from the answer just given (replays)
 *   many callers          `--callers` clients on distinct loopback addresses (127.0.0.x) each send
 *                         the same prompt `--each` times (under max_identical): all should reach
 *                         the provider, none refused
 *   many callers, key: tenant   the same with `runaway.key: tenant` (the old counting): refusals,
 *                         and with `replay: false` too (the old behaviour altogether)
 *
 * Prints requests, upstream calls, refusals (429 runaway_request_loop), replays (x-gearbox-reason:
 * runaway_repeat), other failures, and the seconds each run took. Each gateway runs in a process
 * of its own; the load generator and the emulator share this one. The figures are counts.
 *
 * `node --import tsx bench/runaway.bench.ts [--loop 30000 --seconds 20 --callers 200 --each 5]`
 */
import http from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { createAuthDeps } from "../extproc/governance/auth.ts";
import { Governor } from "../extproc/governance/governor.ts";
import { startFrontDoor } from "../extproc/http/front-door.ts";
import { MemoryLimiter } from "../extproc/store/memory-limiter.ts";
import { MemoryTenantStore } from "../extproc/store/memory-tenant-store.ts";
import { silentLogger } from "../common/telemetry/logger.ts";
import { startOpenAIUpstream, type OpenAIUpstream } from "../test/emulators/openai-upstream.ts";
import { openAIProviderYaml, testConfig } from "../test/support/gateway.ts";
import { numberArg, runBench, startRole } from "./processes.ts";
import { Runtime } from "../extproc/runtime/runtime.ts";

const LOOP = numberArg("loop", 30_000);
/** The loop is spread over at least this long (it spans two 10 s windows and more). */
const LOOP_SECONDS = numberArg("seconds", 20);
const CALLERS = numberArg("callers", 200);
const EACH = numberArg("each", 5);
const IN_FLIGHT = 8;

interface Tally {
  requests: number;
  upstream: number;
  refused: number;
  replayed: number;
  failed: number;
  seconds: number;
}

/** One request from `localAddress` over `agent`; its status and `x-gearbox-reason`. */
function send(agent: http.Agent, url: URL, body: Buffer, localAddress: string): Promise<{ status: number; reason: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: "POST", agent, localAddress, headers: { "content-type": "application/json", "content-length": String(body.length) } },
      (res) => {
        res.on("data", () => undefined);
        res.on("end", () => resolve({ status: res.statusCode ?? 0, reason: String(res.headers["x-gearbox-reason"] ?? "") }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** The gateway process: the front door on the defaults plus `extra` YAML, in front of `upstreamBaseURL`, with governance. */
async function gateway(upstreamBaseURL: string, extra: string): Promise<void> {
  const config = testConfig(openAIProviderYaml(upstreamBaseURL, extra), { TEST_PROVIDER_KEY: "sk-bench" });
  const logger = silentLogger();
  const governor = new Governor({ store: new MemoryLimiter(), runaway: config.runaway, logger });
  const frontDoor = await startFrontDoor(
    { runtime: new Runtime(config), logger, governance: { auth: createAuthDeps(config, new MemoryTenantStore(), {}), governor } },
    0,
    "127.0.0.1",
  );
  process.send?.({ ready: { port: frontDoor.port } });
}

/** A gateway (its own process) in front of `upstream`; runs `drive` against its URL and tallies. */
async function run(
  upstream: OpenAIUpstream,
  extra: string,
  drive: (url: URL, tally: (r: { status: number; reason: string }) => void) => Promise<void>,
): Promise<Tally> {
  const { port } = await startRole(new URL(import.meta.url), "gateway", upstream.baseURL, extra);
  const before = upstream.requests.length;
  const t: Tally = { requests: 0, upstream: 0, refused: 0, replayed: 0, failed: 0, seconds: 0 };
  const started = performance.now();
  await drive(new URL(`http://127.0.0.1:${String(port)}/v1/chat/completions`), (r) => {
    t.requests++;
    if (r.status === 429) t.refused++;
    else if (r.status === 200 && r.reason === "runaway_repeat") t.replayed++;
    else if (r.status !== 200) t.failed++;
  });
  t.seconds = Math.round((performance.now() - started) / 100) / 10;
  t.upstream = upstream.requests.length - before;
  return t;
}

const prompt = (text: string) => Buffer.from(JSON.stringify({ model: "gpt-4.1-nano", messages: [{ role: "user", content: text }], max_tokens: 32 }));

/** One caller, `count` identical requests over at least `seconds`, `IN_FLIGHT` at a time. */
function oneCallerLooping(count: number, seconds: number) {
  return async (url: URL, tally: (r: { status: number; reason: string }) => void) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
    const body = prompt("Retry until it works: summarize the incident report.");
    let sent = 0;
    const started = performance.now();
    const worker = async () => {
      while (sent < count) {
        const due = started + (sent * seconds * 1000) / count;
        sent++;
        if (due > performance.now()) await sleep(due - performance.now());
        tally(await send(agent, url, body, "127.0.0.1"));
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    agent.destroy();
  };
}

/** `callers` clients on distinct loopback addresses, each sending the one prompt `each` times, all at once. */
function manyCallers(callers: number, each: number) {
  return async (url: URL, tally: (r: { status: number; reason: string }) => void) => {
    const body = prompt("Write a short welcome message for a new user.");
    const caller = async (i: number) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const address = `127.0.${Math.floor((i + 2) / 250)}.${((i + 2) % 250) + 1}`;
      for (let n = 0; n < each; n++) tally(await send(agent, url, body, address));
      agent.destroy();
    };
    await Promise.all(Array.from({ length: callers }, (_, i) => caller(i)));
  };
}

async function main(): Promise<void> {
  const upstream = await startOpenAIUpstream();
  const rows: [string, Tally][] = [];
  rows.push([`one caller looping (${LOOP} in ≥ ${LOOP_SECONDS} s)`, await run(upstream, "", oneCallerLooping(LOOP, LOOP_SECONDS))]);
  rows.push([`${CALLERS} callers × ${EACH}`, await run(upstream, "", manyCallers(CALLERS, EACH))]);
  rows.push([`${CALLERS} callers × ${EACH}, key: tenant`, await run(upstream, "runaway: { key: tenant }\n", manyCallers(CALLERS, EACH))]);
  rows.push([
    `${CALLERS} callers × ${EACH}, key: tenant, replay: false (before issue 15)`,
    await run(upstream, "runaway: { key: tenant, replay: false }\n", manyCallers(CALLERS, EACH)),
  ]);
  await upstream.close();
  console.log("| run | requests | upstream calls | refused (429) | replayed | other failures | seconds |");
  console.log("|---|---:|---:|---:|---:|---:|---:|");
  for (const [name, t] of rows) console.log(`| ${name} | ${t.requests} | ${t.upstream} | ${t.refused} | ${t.replayed} | ${t.failed} | ${t.seconds} |`);
}

if (process.argv[2] === "gateway") void gateway(process.argv[3] ?? "", process.argv[4] ?? "");
else runBench(main);
