/**
 * A control-plane restart under a connected agent: the gRPC server is killed (open streams fail,
 * as when the process dies), a new one with a new registry and the same config comes up on the
 * same port; the agent reconnects with backoff, resumes with the version it acknowledged, is
 * sent no assignment, reloads no model, and the new registry lists it.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { connectControlPlane, type ControlPlaneClient } from "../../edge-agent/control-plane-client.ts";
import { tinyFixture, type TinyFixture } from "../../edge-agent/engines/llamacpp-test-support.ts";
import type { ModelRegistry } from "../../edge-agent/registry.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import { assignmentVersion, type ModelSpec } from "../../xds/registry/assignment.ts";
import { EdgeRegistry } from "../../xds/registry/registry.ts";
import { countingRegistry, startRegistryServer, type RegistryServer } from "./registry-support.ts";
import { eventually } from "../support/eventually.ts";

const logger = silentLogger();
let fixture: TinyFixture;
let agent: { registry: ModelRegistry; loads: string[] };
let client: ControlPlaneClient;
const closers: (() => void)[] = [];

/** A control plane: a fresh registry over the config. */
async function controlPlane(models: ModelSpec[], port = 0): Promise<{ registry: EdgeRegistry; server: RegistryServer }> {
  const registry = new EdgeRegistry({ heartbeatIntervalMs: 100, expiryMs: 1000, assignmentsFor: () => models, logger });
  const server = await startRegistryServer(registry, logger, port);
  closers.push(
    () => registry.close(),
    () => server.kill(),
  );
  return { registry, server };
}

before(async () => {
  fixture = await tinyFixture();
  agent = countingRegistry(fixture);
});
after(async () => {
  await client.close();
  for (const close of closers) close();
  await agent.registry.close();
  await fixture.close();
});

test("after a control-plane restart the agent resumes from its acked version and reloads no model", async () => {
  const models: ModelSpec[] = [{ id: "tiny", engine: "llamacpp", source: fixture.file, threads: 1, context_length: 256 }];
  const version = assignmentVersion(models);
  const first = await controlPlane(models);
  client = connectControlPlane({
    address: first.server.address,
    agentId: "agent-r",
    node: "node-a",
    advertiseAddress: "127.0.0.1:18088",
    registry: agent.registry,
    capacity: { maxConcurrent: 1, maxQueue: 4 },
    load: () => ({ inFlight: 0, queued: 0 }),
    logger,
    backoff: { initialMs: 50, maxMs: 400 },
  });
  await eventually(() => first.registry.get("agent-r")?.ackedVersion === version, "first control plane: ACK");
  const model = agent.registry.get("tiny").model;
  const firstSession = client.status().sessionId;
  assert.deepEqual(agent.loads, ["tiny"]);
  assert.deepEqual(first.server.sent, ["welcome", "assignment"]);

  first.server.kill();
  first.registry.close();
  await eventually(() => !client.status().connected, "the agent notices the control plane is gone");
  // Down: it keeps trying (each attempt fails at once), keeping the failure for status().
  const down = await eventually(() => client.status().reconnects >= 2 && client.status(), "attempts while the control plane is down");
  assert.match(down.lastError, /^UNAVAILABLE: /);

  const second = await controlPlane(models, first.server.port);
  const view = await eventually(() => client.status().connected && second.registry.get("agent-r"), "reconnected: the new registry lists the agent");
  const status = client.status();
  assert.notEqual(status.sessionId, firstSession, "a new session");
  assert.equal(status.ackedVersion, version);
  assert.equal(view.ackedVersion, version, "the hello carried the acked version");
  assert.deepEqual(view.models, [{ id: "tiny", engine: "llamacpp" }], "the hello carried the loaded models");
  await eventually(() => second.registry.stats().heartbeats >= 2, "heartbeats on the new session");
  assert.deepEqual(second.server.sent, ["welcome"], "resumed: no assignment sent");
  assert.deepEqual(agent.loads, ["tiny"], "no model was loaded again");
  assert.equal(agent.registry.get("tiny").model, model, "the same model object");
});
