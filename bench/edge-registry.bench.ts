/**
 * The edge registry's cost on the control plane, in one run:
 * - memory: heap and RSS of the control-plane process (registry + gRPC server) after GC with 0,
 *   1,000 and 5,000 connected agents, each agent a raw stream on a TCP connection of its own
 *   (as real agents are), heartbeating at the registry's interval;
 * - heartbeat handling: heartbeats/s the control-plane process takes off the wire (gRPC decode,
 *   validation, registry) while 1,000 agents send as fast as flow control lets them, and the
 *   registry alone (`AgentSession.heartbeat`, no gRPC).
 * The agents run in a child process (this file with `--agents`), so the figures are the server's.
 *
 * `node --expose-gc --import tsx bench/edge-registry.bench.ts [agents=1000,5000] [heartbeat ms=1000]`
 */
import { fork, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { silentLogger } from "../common/telemetry/logger.ts";
import { EdgeRegistry } from "../xds/registry/registry.ts";
import { helloFor, openRaw, registryClient, startRegistryServer, type RawAgent } from "../test/xds/registry-support.ts";

type Command = { op: "connect"; address: string; total: number; heartbeatIntervalMs: number } | { op: "flood"; ms: number; agents: number };
type Reply = { op: "connected"; total: number } | { op: "flooded"; sent: number };

const MB = 1024 * 1024;
const HEARTBEAT = { heartbeat: { in_flight: 1, queued: 0, models: [{ id: "m", engine: "llamacpp" }] } };

/** Child: opens agent streams on request, heartbeats them at the registry's interval, floods on request. */
function agents(): void {
  const streams: RawAgent[] = [];
  let timer: NodeJS.Timeout | undefined;
  const send = (message: Reply) => process.send?.(message);
  process.on("disconnect", () => process.exit(0));
  process.on("message", (command: Command) => {
    void (async () => {
      switch (command.op) {
        case "connect": {
          // Heartbeats start with the first welcome, so early agents do not expire while later ones connect.
          timer ??= setInterval(() => streams.forEach((s) => s.responses.length > 0 && s.send(HEARTBEAT)), command.heartbeatIntervalMs);
          for (let start = streams.length; start < command.total; start += 200) {
            const batch: Promise<unknown>[] = [];
            for (let i = start; i < Math.min(command.total, start + 200); i++) {
              const stream = openRaw(registryClient(command.address, true));
              stream.send(helloFor(`bench-${i}`, { models: [{ id: "m", engine: "llamacpp" }] }));
              streams.push(stream);
              batch.push(stream.response(0));
            }
            await Promise.all(batch);
          }
          return send({ op: "connected", total: streams.length });
        }
        case "flood": {
          const until = performance.now() + command.ms;
          let sent = 0;
          // Each stream writes one heartbeat per turn of the event loop (gRPC's write callback
          // comes on the next tick, before any I/O: awaiting it alone would starve the loop).
          await Promise.all(
            streams.slice(0, command.agents).map(async (s) => {
              while (performance.now() < until) {
                sent++;
                if (!s.call.write(HEARTBEAT)) await once(s.call, "drain");
                await new Promise((resolve) => setImmediate(resolve));
              }
            }),
          );
          return send({ op: "flooded", sent });
        }
        default:
          return command satisfies never;
      }
    })();
  });
}

function ask(child: ChildProcess, command: Command): Promise<Reply> {
  const reply = once(child, "message").then(([m]) => m as Reply);
  child.send(command);
  return reply;
}

async function memory(): Promise<{ heap: number; rss: number }> {
  for (let i = 0; i < 4; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    globalThis.gc?.();
  }
  const { heapUsed, rss } = process.memoryUsage();
  return { heap: heapUsed, rss };
}

/**
 * The registry alone, no gRPC: heap per session (5,000 sessions on no-op links, the same
 * assignment each) and heartbeats/s through `AgentSession.heartbeat`, alternating loads so half
 * announce a change.
 */
async function registryOnly(heartbeats: number): Promise<{ bytesPerAgent: number; perSecond: number }> {
  const before = await memory();
  const registry = new EdgeRegistry({ assignmentsFor: () => [{ id: "m", engine: "llamacpp", source: "/models/m.gguf" }], logger: silentLogger() });
  const link = { send: () => undefined, end: () => undefined };
  const hello = (i: number) => ({
    agentId: `a${i}`,
    node: "n",
    address: "10.0.0.1:8088",
    models: [{ id: "m", engine: "llamacpp" }],
    capacity: { maxConcurrent: 1, maxQueue: 4 },
    ackedVersion: "",
    labels: { arch: "x64" },
  });
  const sessions = Array.from({ length: 5000 }, (_, i) => registry.connect(hello(i), link));
  const after = await memory();
  const models = [{ id: "m", engine: "llamacpp" }];
  const start = performance.now();
  for (let i = 0; i < heartbeats; i++) sessions[i % sessions.length]?.heartbeat({ inFlight: i & 1, queued: 0 }, models);
  const perSecond = heartbeats / ((performance.now() - start) / 1000);
  registry.close();
  return { bytesPerAgent: (after.heap - before.heap) / sessions.length, perSecond };
}

async function main(): Promise<void> {
  if (typeof globalThis.gc !== "function") throw new Error("run with node --expose-gc --import tsx bench/edge-registry.bench.ts");
  const steps = (process.argv[2] ?? "1000,5000").split(",").map(Number);
  const heartbeatIntervalMs = Number(process.argv[3] ?? 1000);
  const logger = silentLogger();
  const registry = new EdgeRegistry({ heartbeatIntervalMs, assignmentsFor: () => undefined, logger });
  const server = await startRegistryServer(registry, logger);
  const child = fork(fileURLToPath(import.meta.url), ["--agents"], { execArgv: ["--import", "tsx"] });
  try {
    await measure(registry, server.address, child, steps, heartbeatIntervalMs);
  } finally {
    child.kill();
    registry.close();
    server.kill();
  }
  const alone = await registryOnly(2_000_000);
  console.log(
    `registry alone (no gRPC): ${(alone.bytesPerAgent / 1024).toFixed(2)} KB heap per agent (5,000 sessions), ${(alone.perSecond / 1e6).toFixed(2)} M heartbeats/s`,
  );
}

async function measure(registry: EdgeRegistry, address: string, child: ChildProcess, steps: number[], heartbeatIntervalMs: number): Promise<void> {
  const settle = () => new Promise((resolve) => setTimeout(resolve, 2 * heartbeatIntervalMs));

  const rows: { agents: number; heap: number; rss: number }[] = [{ agents: 0, ...(await memory()) }];
  for (const total of steps) {
    await ask(child, { op: "connect", address, total, heartbeatIntervalMs });
    await settle();
    if (registry.stats().agents !== total) throw new Error(`expected ${total} agents, registry has ${registry.stats().agents}`);
    rows.push({ agents: total, ...(await memory()) });
  }
  const base = rows[0] ?? { heap: 0, rss: 0 };
  console.log(`edge registry, heartbeat every ${heartbeatIntervalMs} ms (node ${process.version})`);
  console.log("| agents | heap MB | RSS MB | heap Δ MB | RSS Δ MB | heap KB / agent | RSS KB / agent |");
  console.log("|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of rows) {
    const per = (bytes: number) => (r.agents ? (bytes / r.agents / 1024).toFixed(1) : "—");
    console.log(
      `| ${r.agents} | ${(r.heap / MB).toFixed(1)} | ${(r.rss / MB).toFixed(1)} | ${((r.heap - base.heap) / MB).toFixed(1)} | ${((r.rss - base.rss) / MB).toFixed(1)} | ${per(r.heap - base.heap)} | ${per(r.rss - base.rss)} |`,
    );
  }

  const floodAgents = Math.min(1000, registry.stats().agents);
  const before = registry.stats().heartbeats;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const flooded = await ask(child, { op: "flood", ms: 5000, agents: floodAgents });
  const handled = registry.stats().heartbeats - before;
  const seconds = (performance.now() - started) / 1000;
  const { user, system } = process.cpuUsage(cpu);
  const cpuPerHeartbeatUs = (user + system) / handled;
  console.log(
    `\nheartbeats over gRPC, ${floodAgents} agents flooding 5 s: ${Math.round(handled / seconds)} /s handled (${handled} handled, ${flooded.op === "flooded" ? flooded.sent : "?"} written by the agents)`,
  );
  console.log(
    `control-plane CPU per heartbeat: ${cpuPerHeartbeatUs.toFixed(1)} µs (≈ ${Math.round(1e6 / cpuPerHeartbeatUs)} heartbeats/s per core; CPU busy ${Math.round(((user + system) / 1e6 / seconds) * 100)} % of one core)`,
  );
  if (registry.stats().agents !== rows.at(-1)?.agents) console.log(`note: ${registry.stats().agents} agents listed after the flood`);
}

if (process.argv.includes("--agents")) agents();
else await main();
