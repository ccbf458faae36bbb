/**
 * Control-plane push: how long until every subscribed stream has a new snapshot, and what one
 * stream costs the server. The ADS server runs in a child process (`--server`, with
 * `--expose-gc` for memory figures); this process opens N client streams over loopback, each
 * on its own connection as every Envoy has, subscribed like Envoy (CDS wildcard + the
 * `gearbox-edge` endpoints) and ACKing every response at once.
 *
 * Per change: the server builds the next snapshot (one agent's load changes, as a heartbeat
 * does), then on "publish" this process starts the clock and the server calls `setSnapshot`;
 * the figure is the time until the last of the N streams has received the new endpoints. It
 * includes one IPC hop (its one-way time, from a ping, is printed). "Server publish" is the
 * synchronous `setSnapshot` call in the server: every stream's response encoded and queued.
 * Before the next change the server has counted every ACK, so a push never waits on a late ACK
 * of the previous one. Memory per stream: the server's heap, external memory and RSS after GC,
 * with N streams open and acknowledged minus before any, divided by N (N ≥ 100 only).
 *
 * `node --import tsx bench/xds-push.bench.ts [changes=50] [streams=100]`
 */
import { fork, type ChildProcess } from "node:child_process";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import { silentLogger } from "../common/telemetry/logger.ts";
import { SnapshotCache } from "../xds/cache/cache.ts";
import { createSnapshot, type Snapshot } from "../xds/cache/snapshot.ts";
import { adsService, TYPE_URLS } from "../common/control-plane/protos.ts";
import type { EdgeEndpoint } from "../common/registry/endpoint.ts";
import { EDGE_CLUSTER, edgeClusters, edgeLoadAssignment } from "../xds/resources/envoy.ts";
import { routingPolicyResource } from "../xds/resources/gearbox.ts";
import { addAdsService } from "../xds/server/ads.ts";
import type { DeltaDiscoveryResponse, DiscoveryResponse } from "../xds/server/messages.ts";

const AGENTS = 50;
type Mode = "sotw" | "delta";

interface Memory {
  heap: number;
  external: number;
  rss: number;
}

type Command = { cmd: "prepare"; change: number } | { cmd: "publish" } | { cmd: "stats" } | { cmd: "memory" } | { cmd: "ping" };
type Reply =
  | { cmd: "listening"; port: number }
  | { cmd: "prepared"; version: string; buildMs: number }
  | { cmd: "published"; publishMs: number }
  | { cmd: "stats"; acks: number; openStreams: number; nacks: number }
  | ({ cmd: "memory" } & Memory)
  | { cmd: "pong" };

// ---- server (child process) ----

function agents(change: number): EdgeEndpoint[] {
  return Array.from({ length: AGENTS }, (_v, i) => ({
    agentId: `agent-${i}`,
    node: `node-${i % 10}`,
    address: `10.0.${Math.floor(i / 250)}.${(i % 250) + 1}:8088`,
    models: ["qwen3:0.6b", "phi-4-mini"],
    inFlight: i === change % AGENTS ? change : 0,
    queued: 0,
    maxConcurrent: 4,
    maxQueue: 16,
    healthy: true,
  }));
}

function buildSnapshot(change: number): Snapshot {
  const result = createSnapshot([...edgeClusters(), edgeLoadAssignment(agents(change)), routingPolicyResource("default", { rules: [] })]);
  if (!result.ok) throw new Error(result.errors.join("; "));
  return result.value;
}

function memory(): Memory {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) for (let i = 0; i < 3; i++) gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, external: m.external + m.arrayBuffers, rss: m.rss };
}

async function serve(): Promise<void> {
  const cache = new SnapshotCache();
  const server = new grpc.Server();
  const stats = addAdsService(server, cache, silentLogger());
  cache.setSnapshot("default", buildSnapshot(0));
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  let prepared: Snapshot | undefined;
  const reply = (message: Reply) => process.send?.(message);
  process.on("message", (message: Command) => {
    switch (message.cmd) {
      case "prepare": {
        const start = performance.now();
        prepared = buildSnapshot(message.change);
        reply({ cmd: "prepared", version: prepared.version, buildMs: performance.now() - start });
        return;
      }
      case "publish": {
        // Synchronous: every stream's response is encoded and queued before setSnapshot returns.
        const start = performance.now();
        if (prepared) cache.setSnapshot("default", prepared);
        reply({ cmd: "published", publishMs: performance.now() - start });
        return;
      }
      case "stats":
        reply({ cmd: "stats", acks: stats.acks, openStreams: stats.openStreams, nacks: stats.nacks });
        return;
      case "memory":
        reply({ cmd: "memory", ...memory() });
        return;
      case "ping":
        reply({ cmd: "pong" });
        return;
      default:
        throw new Error(`unknown command ${JSON.stringify(message satisfies never)}`);
    }
  });
  process.on("disconnect", () => {
    server.forceShutdown();
    process.exit(0);
  });
  reply({ cmd: "listening", port });
}

// ---- load generator (this process) ----

class ServerProcess {
  private readonly child: ChildProcess;
  private readonly waiting: ((reply: Reply) => void)[] = [];

  constructor() {
    this.child = fork(fileURLToPath(import.meta.url), ["--server"], { execArgv: ["--import", "tsx", "--expose-gc"] });
    this.child.on("message", (reply: Reply) => this.waiting.shift()?.(reply));
  }

  next<C extends Reply["cmd"]>(cmd: C): Promise<Extract<Reply, { cmd: C }>> {
    return new Promise((resolve, reject) =>
      this.waiting.push((reply) => (reply.cmd === cmd ? resolve(reply as Extract<Reply, { cmd: C }>) : reject(new Error(`expected ${cmd}, got ${reply.cmd}`)))),
    );
  }

  ask<C extends Reply["cmd"]>(command: Command, expect: C): Promise<Extract<Reply, { cmd: C }>> {
    const answer = this.next(expect);
    this.child.send(command);
    return answer;
  }

  stop(): void {
    this.child.disconnect();
  }
}

interface Subscriber {
  /** Resolves when this stream has received the endpoints of `version`. */
  waitFor(version: string): Promise<number>;
  close(): void;
}

function subscribe(address: string, mode: Mode, id: number): Subscriber {
  const Ads = adsService();
  const client = new Ads(address, grpc.credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1 });
  const method = mode === "sotw" ? "StreamAggregatedResources" : "DeltaAggregatedResources";
  const open = (client as unknown as Record<string, () => grpc.ClientDuplexStream<object, DiscoveryResponse & DeltaDiscoveryResponse>>)[method];
  if (!open) throw new Error(`no ${method}`);
  const stream = open.call(client);
  const node = { id: `envoy-${id}`, cluster: "envoys" };
  let target: { version: string; resolve: (at: number) => void } | undefined;
  let seen = "";
  stream.on("data", (response: DiscoveryResponse & DeltaDiscoveryResponse) => {
    const version = (mode === "sotw" ? response.version_info : response.system_version_info) ?? "";
    if (response.type_url === TYPE_URLS.endpoints) {
      seen = version;
      if (target !== undefined && target.version === version) target.resolve(performance.now());
    }
    stream.write(
      mode === "sotw"
        ? {
            type_url: response.type_url,
            version_info: version,
            response_nonce: response.nonce,
            resource_names: response.type_url === TYPE_URLS.endpoints ? [EDGE_CLUSTER] : [],
          }
        : { type_url: response.type_url, response_nonce: response.nonce },
    );
  });
  stream.on("error", () => undefined);
  if (mode === "sotw") {
    stream.write({ node, type_url: TYPE_URLS.cluster });
    stream.write({ type_url: TYPE_URLS.endpoints, resource_names: [EDGE_CLUSTER] });
  } else {
    stream.write({ node, type_url: TYPE_URLS.cluster });
    stream.write({ type_url: TYPE_URLS.endpoints, resource_names_subscribe: [EDGE_CLUSTER] });
  }
  return {
    waitFor: (version) =>
      seen === version
        ? Promise.resolve(performance.now())
        : new Promise<number>((resolve) => {
            target = { version, resolve };
          }),
    close: () => {
      stream.cancel();
      client.close();
    },
  };
}

const percentile = (xs: readonly number[], p: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
};

async function settle(server: ServerProcess, acks: number): Promise<void> {
  for (;;) {
    const stats = await server.ask({ cmd: "stats" }, "stats");
    if (stats.nacks > 0) throw new Error("the server counted a NACK");
    if (stats.acks >= acks) return;
    await new Promise((r) => setTimeout(r, 2));
  }
}

interface Row {
  mode: Mode;
  streams: number;
  p50: number;
  p99: number;
  buildMs: number;
  publishMs: number;
  perStream?: Memory;
}

async function run(mode: Mode, streams: number, changes: number): Promise<Row> {
  const server = new ServerProcess();
  const { port } = await server.next("listening");
  const before = await server.ask({ cmd: "memory" }, "memory");
  const subscribers = Array.from({ length: streams }, (_v, i) => subscribe(`127.0.0.1:${port}`, mode, i));
  // Two responses per stream (clusters, endpoints), each ACKed.
  let acks = streams * 2;
  await settle(server, acks);
  const after = await server.ask({ cmd: "memory" }, "memory");
  const latencies: number[] = [];
  const builds: number[] = [];
  const publishes: number[] = [];
  for (let change = 1; change <= changes; change++) {
    const { version, buildMs } = await server.ask({ cmd: "prepare", change }, "prepared");
    builds.push(buildMs);
    const arrivals = subscribers.map((s) => s.waitFor(version));
    const start = performance.now();
    const published = server.ask({ cmd: "publish" }, "published");
    const last = Math.max(...(await Promise.all(arrivals)));
    latencies.push(last - start);
    publishes.push((await published).publishMs);
    acks += streams;
    await settle(server, acks);
  }
  for (const s of subscribers) s.close();
  server.stop();
  const per = (key: keyof Memory) => (after[key] - before[key]) / streams;
  return {
    mode,
    streams,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    buildMs: percentile(builds, 50),
    publishMs: percentile(publishes, 50),
    ...(streams >= 100 && { perStream: { heap: per("heap"), external: per("external"), rss: per("rss") } }),
  };
}

async function ipcOneWay(): Promise<number> {
  const server = new ServerProcess();
  await server.next("listening");
  const rounds: number[] = [];
  for (let i = 0; i < 200; i++) {
    const start = performance.now();
    await server.ask({ cmd: "ping" }, "pong");
    rounds.push(performance.now() - start);
  }
  server.stop();
  return percentile(rounds, 50) / 2;
}

async function main(): Promise<void> {
  const changes = Number(process.argv[2] ?? 50);
  const many = Number(process.argv[3] ?? 100);
  const oneWay = await ipcOneWay();
  console.log(
    `IPC one-way (median of 200 pings / 2): ${oneWay.toFixed(3)} ms; ${changes} changes per row; snapshot = 2 edge clusters + ${AGENTS} agents + a routing policy`,
  );
  console.log(
    "| mode | streams | all received p50 ms | p99 ms | snapshot build ms (p50) | server publish ms (p50) | server heap / stream | external / stream | RSS / stream |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const mode of ["sotw", "delta"] as const) {
    for (const streams of [1, many]) {
      const row = await run(mode, streams, changes);
      const kb = (bytes: number | undefined) => (bytes === undefined ? "—" : `${(bytes / 1024).toFixed(1)} KiB`);
      console.log(
        `| ${row.mode} | ${row.streams} | ${row.p50.toFixed(2)} | ${row.p99.toFixed(2)} | ${row.buildMs.toFixed(2)} | ${row.publishMs.toFixed(2)} | ${kb(row.perStream?.heap)} | ${kb(row.perStream?.external)} | ${kb(row.perStream?.rss)} |`,
      );
    }
  }
}

if (process.argv.includes("--server")) await serve();
else await main();
