/**
 * How fast the mesh follows edge agents: from an agent's hello to an ext_proc replica able to
 * route edge decisions to it, and from the agent's stream ending to the replica no longer picking
 * it. The control plane and the replica run in this process, connected over loopback gRPC as in
 * production (ADS state of the world); the agent is a raw registry stream announcing a model it
 * already holds (model loading, which takes what the model takes, is not measured here).
 *
 *   node --import tsx bench/edge-join.bench.ts
 *
 * Each of ROUNDS rounds: hello → poll the replica's live set every 1 ms until the agent is picked;
 * close → poll until it is gone. With BACKGROUND other agents connected and heartbeating, so the
 * snapshot is not trivial.
 */
import { availableParallelism, loadavg } from "node:os";
import { LiveEdgeAgents } from "../extproc/edge/agents.ts";
import { followControlPlane, type Followed } from "../extproc/control/follow.ts";
import { Runtime } from "../extproc/runtime/runtime.ts";
import { silentLogger } from "../common/telemetry/logger.ts";
import { startControlPlane } from "../xds/control-plane.ts";
import { helloFor, openRaw, registryClient, type RawAgent } from "../test/xds/registry-support.ts";
import { testConfig } from "../test/support/gateway.ts";

const ROUNDS = 30;
const BACKGROUND = 100;

const config = testConfig("edge:\n  default_model: m\nxds: { heartbeat_interval_ms: 1000, expiry_ms: 3000, startup_grace_ms: 0 }\n");
const plane = await startControlPlane(config, silentLogger(), 0, "127.0.0.1");
const edgeAgents = new LiveEdgeAgents();
const deps: Followed = { runtime: new Runtime(config, { edgeAgents }), edgeAgents };
const follower = followControlPlane({ address: `127.0.0.1:${plane.port}`, nodeId: "bench", followed: deps, logger: silentLogger() });
if (!(await follower.ready(5_000))) throw new Error("the replica did not get a snapshot");

const client = registryClient(`127.0.0.1:${plane.port}`);
const model = [{ id: "m", engine: "llamacpp" }];
const background: RawAgent[] = [];
for (let i = 0; i < BACKGROUND; i++) {
  const a = openRaw(client);
  a.send(
    helloFor(`bg-${i}`, {
      node: `node-${i % 10}`,
      address: `10.0.${Math.floor(i / 200)}.${(i % 200) + 1}:8088`,
      models: [{ id: "other", engine: "llamacpp" }],
    }),
  );
  background.push(a);
}
const heartbeats = setInterval(() => {
  for (const a of background) a.send({ heartbeat: { in_flight: 0, queued: 0, models: [{ id: "other", engine: "llamacpp" }] } });
}, 1000);

async function waitFor(check: () => boolean): Promise<number> {
  const t0 = performance.now();
  while (!check()) await new Promise((r) => setTimeout(r, 1));
  return performance.now() - t0;
}

const joins: number[] = [];
const leaves: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const address = `127.0.1.${round + 1}:8088`;
  const agent = openRaw(client);
  const t0 = performance.now();
  agent.send(helloFor(`bench-${round}`, { node: "node-x", address, models: model }));
  await waitFor(() => deps.edgeAgents.pick("m")?.address === address);
  joins.push(performance.now() - t0);
  agent.call.end();
  leaves.push(await waitFor(() => !deps.edgeAgents.serves("m")));
}

clearInterval(heartbeats);
for (const a of background) a.call.end();
follower.close();
client.close();
await plane.close();

const q = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? NaN;
console.log(
  `node ${process.version}; ${availableParallelism()} CPUs, load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}; ${BACKGROUND} other agents heartbeating every 1 s`,
);
console.log(
  `agent hello → replica routes to it: p50 ${q(joins, 0.5).toFixed(1)} ms, p90 ${q(joins, 0.9).toFixed(1)} ms, max ${Math.max(...joins).toFixed(1)} ms (${ROUNDS} rounds)`,
);
console.log(
  `agent stream ends → replica stops picking it: p50 ${q(leaves, 0.5).toFixed(1)} ms, p90 ${q(leaves, 0.9).toFixed(1)} ms, max ${Math.max(...leaves).toFixed(1)} ms`,
);
process.exit(0);
