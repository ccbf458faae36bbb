/**
 * `gearbox edge-agent`'s control-plane flags (`runEdgeAgent`, as the CLI calls it) against a real
 * registry server: the flags and their environment variables and defaults reach the hello;
 * without `--control-plane` the agent stays standalone; a bad advertise address is a clear error.
 */
import assert from "node:assert/strict";
import { networkInterfaces } from "node:os";
import { after, before, test } from "node:test";
import { runEdgeAgent } from "../../edge-agent/main.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import { EdgeRegistry } from "../../xds/registry/registry.ts";
import { startRegistryServer, type RegistryServer } from "./registry-support.ts";
import { eventually } from "../support/eventually.ts";

const logger = silentLogger();
const ENV = { GEARBOX_LOG_LEVEL: "silent" };
let registry: EdgeRegistry;
let server: RegistryServer;

before(async () => {
  registry = new EdgeRegistry({ heartbeatIntervalMs: 100, assignmentsFor: () => undefined, logger });
  server = await startRegistryServer(registry, logger);
});
after(() => {
  registry.close();
  server.kill();
});

test("--control-plane, --node, --advertise-address and --agent-id reach the control plane", async () => {
  const agent = await runEdgeAgent(
    [
      "--port",
      "0",
      "--control-plane",
      server.address,
      "--node",
      "node-x",
      "--advertise-address",
      "10.9.8.7:8088",
      "--agent-id",
      "edge-x",
      "--max-concurrency",
      "2",
      "--max-queue",
      "5",
    ],
    ENV,
  );
  try {
    const view = await eventually(() => registry.get("edge-x"), "listed");
    assert.equal(view.node, "node-x");
    assert.equal(view.address, "10.9.8.7:8088");
    assert.deepEqual(view.capacity, { maxConcurrent: 2, maxQueue: 5 });
    assert.ok(agent.controlPlane);
  } finally {
    await agent.stop();
  }
  await eventually(() => registry.get("edge-x") === undefined, "stop() leaves the control plane");
});

test("from the environment, with defaults: agent id <node>:<port>, advertised first non-internal IPv4 and the HTTP port", async () => {
  const ip = Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .find((a) => a.family === "IPv4" && !a.internal)?.address;
  const env = { ...ENV, GEARBOX_XDS_ADDRESS: server.address, NODE_NAME: "node-env" };
  if (!ip) {
    await assert.rejects(runEdgeAgent(["--port", "0"], env), /no non-internal IPv4 address to advertise; give --advertise-address/);
    return;
  }
  const agent = await runEdgeAgent(["--port", "0"], env);
  try {
    const id = `node-env:${agent.server.port}`;
    const view = await eventually(() => registry.get(id), `listed as ${id}`);
    assert.equal(view.address, `${ip}:${agent.server.port}`);
    assert.equal(view.node, "node-env");
  } finally {
    await agent.stop();
  }
  assert.equal(agent.controlPlane?.status().connected, false);
});

test("without --control-plane the agent is standalone: no client, and it serves", async () => {
  const agent = await runEdgeAgent(["--port", "0"], ENV);
  try {
    assert.equal(agent.controlPlane, undefined);
    const health = await fetch(`http://127.0.0.1:${agent.server.port}/healthz`);
    assert.equal(health.status, 200);
  } finally {
    await agent.stop();
  }
});

test("a bad --advertise-address or --control-plane is refused naming the flag", async () => {
  await assert.rejects(
    runEdgeAgent(["--port", "0", "--control-plane", server.address, "--advertise-address", "edge.local:8088"], ENV),
    /^Error: --advertise-address: 'edge\.local:8088' does not start with an IP address/,
  );
  await assert.rejects(
    runEdgeAgent(["--port", "0", "--control-plane", "http://cp:18000", "--advertise-address", "10.0.0.1:8088"], ENV),
    /control plane address must be host:port, got 'http:\/\/cp:18000'/,
  );
});
