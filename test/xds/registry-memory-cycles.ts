/**
 * Run by `registry-memory.test.ts` in a child process with `--expose-gc`: a real registry server
 * and raw agent streams over loopback in this process, `cycles` connect → hello → (welcome,
 * assignment) → heartbeat → ACK → disconnect cycles, 100 at a time on a connection of their own
 * (Node's HTTP/2 server closes a connection that resets streams too fast, the "rapid reset"
 * guard, so one connection cannot carry thousands of cancels), each ending one of four ways:
 * the agent half-closes, the agent cancels, a second stream with the same id replaces it (then
 * cancels), or it goes silent and is expired. Prints one JSON line: the heap after GC once the
 * first `warmup` cycles are done, halfway through the rest and at the end, the sessions the
 * registry saw join, and what it still holds.
 *
 * `node --expose-gc --import tsx test/xds/registry-memory-cycles.ts <cycles> <warmup> [--retain-streams]`
 * (`--retain-streams` keeps every client stream reachable: a deliberate leak the test must catch).
 */
import { silentLogger } from "../../common/telemetry/logger.ts";
import { EdgeRegistry } from "../../xds/registry/registry.ts";
import { helloFor, openRaw, registryClient, startRegistryServer, type RawAgent, type RegistryClient } from "./registry-support.ts";
import { eventually } from "../support/eventually.ts";

const [cyclesArg = "3000", warmupArg = "300", flag] = process.argv.slice(2);
const gc = globalThis.gc;
if (!gc) throw new Error("run with node --expose-gc");
const logger = silentLogger();
const retained: RawAgent[] = [];

const registry = new EdgeRegistry({
  heartbeatIntervalMs: 50,
  expiryMs: 150,
  assignmentsFor: (agent) => [{ id: "m", engine: "llamacpp", source: `/models/${agent.agentId}.gguf` }],
  logger,
});
let joins = 0;
registry.onChange((change) => (joins += change.kind === "joined" ? 1 : 0));
const server = await startRegistryServer(registry, logger);

async function cycle(client: RegistryClient, i: number): Promise<void> {
  const id = `agent-${i}`;
  const stream = openRaw(client);
  if (flag === "--retain-streams") retained.push(stream);
  stream.send(helloFor(id));
  await stream.response(0);
  const assignment = (await stream.response(1)).assignment;
  stream.send({ heartbeat: { in_flight: 1, queued: 0, models: [{ id: "m", engine: "llamacpp" }] } });
  stream.send({ ack: { version: assignment?.version ?? "", nonce: assignment?.nonce ?? "" } });
  switch (i % 4) {
    case 0:
      stream.call.end();
      break;
    case 1:
      stream.call.cancel();
      break;
    case 2: {
      const replacement = openRaw(client);
      replacement.send(helloFor(id));
      await replacement.response(0);
      replacement.call.cancel();
      await replacement.status;
      break;
    }
    default:
      break; // silent: expired by the registry
  }
  await stream.status;
}

/** Batches of 100 concurrent cycles, each batch on a connection of its own (closed after it). */
async function run(from: number, to: number): Promise<void> {
  for (let start = from; start < to; start += 100) {
    const client = registryClient(server.address, true);
    const batch: Promise<void>[] = [];
    for (let i = start; i < Math.min(to, start + 100); i++) batch.push(cycle(client, i));
    await Promise.all(batch);
    client.close();
  }
  await eventually(() => registry.stats().agents === 0, "every agent gone");
}

async function heapAfterGc(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc?.();
  }
  return process.memoryUsage().heapUsed;
}

const cycles = Number(cyclesArg);
const warmup = Number(warmupArg);
const midway = Math.round((warmup + cycles) / 2);
await run(0, warmup);
const afterWarmup = await heapAfterGc();
await run(warmup, midway);
const atMidway = await heapAfterGc();
await run(midway, cycles);
const atEnd = await heapAfterGc();
console.log(
  JSON.stringify({ cycles, warmup, afterWarmup, atMidway, atEnd, joins, agents: registry.agents().length, stats: registry.stats(), retained: retained.length }),
);
registry.close();
server.kill();
