/**
 * The control-plane client's own behaviour against the real registry service over loopback:
 * address checks, retrying while no control plane listens, surviving a failing load report, and
 * leaving the registry at once on close. (Assignments, NACKs and resume: `test/xds/registry-*`.)
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { silentLogger } from "../common/telemetry/logger.ts";
import { EdgeRegistry } from "../xds/registry/registry.ts";
import { startRegistryServer } from "../test/xds/registry-support.ts";
import { eventually } from "../test/support/eventually.ts";
import { connectControlPlane, type ControlPlaneOptions } from "./control-plane-client.ts";
import { ModelRegistry } from "./registry.ts";
import { createLlamaCppEngine } from "./engines/llamacpp.ts";
import { createOllamaEngine } from "./engines/ollama.ts";
import { createOnnxEngine } from "./engines/onnx.ts";

const logger = silentLogger();
let models: ModelRegistry;
const registries: EdgeRegistry[] = [];
const kills: (() => void)[] = [];

/** A control plane that assigns nothing (agents keep what they have). */
async function controlPlane(port = 0) {
  const registry = new EdgeRegistry({ heartbeatIntervalMs: 100, expiryMs: 400, assignmentsFor: () => undefined, logger });
  const server = await startRegistryServer(registry, logger, port);
  registries.push(registry);
  kills.push(() => server.kill());
  return { registry, server };
}

const options = (address: string, overrides: Partial<ControlPlaneOptions> = {}): ControlPlaneOptions => ({
  address,
  agentId: "agent-c",
  node: "node-a",
  advertiseAddress: "127.0.0.1:18088",
  registry: models,
  capacity: { maxConcurrent: 1, maxQueue: 4 },
  load: () => ({ inFlight: 0, queued: 0 }),
  logger,
  backoff: { initialMs: 20, maxMs: 100 },
  ...overrides,
});

before(() => {
  models = new ModelRegistry(
    { llamacpp: () => createLlamaCppEngine(), ollama: () => createOllamaEngine(), onnx: () => createOnnxEngine() },
    { maxConcurrent: 1, maxQueue: 4, retryAfterSeconds: 1 },
  );
});
after(async () => {
  for (const r of registries) r.close();
  for (const kill of kills) kill();
  await models.close();
});

test("a control-plane address that is not host:port is refused at once", () => {
  for (const bad of ["localhost", "http://cp:18000", "cp:", ":18000", "two words:1"]) {
    assert.throws(() => connectControlPlane(options(bad)), /host:port/, bad);
  }
});

test("with no control plane listening the client retries with backoff; it connects once one comes up on that port", async () => {
  const probe = await controlPlane();
  const port = probe.server.port;
  probe.server.kill();
  const client = connectControlPlane(options(`127.0.0.1:${port}`));
  try {
    const down = await eventually(() => client.status().reconnects >= 3 && client.status(), "retries");
    assert.equal(down.connected, false);
    assert.equal(down.sessionId, "");
    assert.match(down.lastError, /^UNAVAILABLE: /);
    const { registry } = await controlPlane(port);
    const view = await eventually(() => client.status().connected && registry.get("agent-c"), "connected and listed once the control plane is up");
    assert.equal(client.status().sessionId, view.sessionId);
  } finally {
    await client.close();
  }
});

test("a load report that throws still heartbeats (the last good load): the agent outlives the expiry on one session", async () => {
  const { server, registry } = await controlPlane();
  let calls = 0;
  const client = connectControlPlane(
    options(server.address, {
      load: () => {
        if (++calls > 1) throw new Error("load probe failed");
        return { inFlight: 3, queued: 2 };
      },
    }),
  );
  try {
    const session = await eventually(() => registry.get("agent-c")?.sessionId, "listed");
    // The expiry is 4 heartbeat intervals: 10 attempted heartbeats span more than twice that.
    await eventually(() => calls >= 10, "heartbeats attempted past the expiry");
    assert.equal(registry.get("agent-c")?.sessionId, session, "never expired, never reconnected");
    assert.deepEqual(registry.get("agent-c")?.load, { inFlight: 3, queued: 2 });
    assert.equal(client.status().reconnects, 0);
  } finally {
    await client.close();
  }
});

test("close() ends the stream: the control plane drops the agent at once, and the client stays closed", async () => {
  const { server, registry } = await controlPlane();
  const client = connectControlPlane(options(server.address));
  await eventually(() => registry.get("agent-c"), "listed");
  const before = client.status().reconnects;
  await client.close();
  await eventually(() => registry.get("agent-c") === undefined, "dropped on close");
  // Longer than the backoff ceiling (100 ms): a reconnect scheduled by the stream's end would have run.
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(client.status().connected, false);
  assert.equal(client.status().reconnects, before, "no reconnect after close");
  assert.equal(registry.get("agent-c"), undefined);
  await client.close();
});
