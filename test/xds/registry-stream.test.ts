/**
 * The edge registry over real gRPC on loopback: the edge agent's control-plane client with a
 * real `ModelRegistry` on the tiny GGUF (llama.cpp, one thread) against `EdgeRegistry` +
 * `addEdgeRegistryService`; raw streams for protocol errors, replacement and expiry.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { after, afterEach, before, describe, test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { connectControlPlane, type ControlPlaneClient } from "../../edge-agent/control-plane-client.ts";
import { tinyFixture, type TinyFixture } from "../../edge-agent/engines/llamacpp-test-support.ts";
import type { ModelRegistry } from "../../edge-agent/registry.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import { assignmentVersion, type ModelSpec } from "../../xds/registry/assignment.ts";
import { EdgeRegistry, type RegistryChange } from "../../xds/registry/registry.ts";
import {
  countingRegistry,
  helloFor,
  openRaw,
  registryClient,
  startRegistryServer,
  type RawAgent,
  type RegistryClient,
  type RegistryServer,
} from "./registry-support.ts";
import { eventually } from "../support/eventually.ts";

const logger = silentLogger();
let fixture: TinyFixture;
let tiny: ModelSpec;
/** What the control plane assigns, by agent id (the test's "config"). */
const config = new Map<string, ModelSpec[]>();
let registry: EdgeRegistry;
let server: RegistryServer;
let raw: RegistryClient;
const changes: RegistryChange[] = [];

before(async () => {
  fixture = await tinyFixture();
  tiny = { id: "tiny", engine: "llamacpp", source: fixture.file, threads: 1, context_length: 256 };
  registry = new EdgeRegistry({ heartbeatIntervalMs: 100, expiryMs: 1000, assignmentsFor: (a) => config.get(a.agentId), logger });
  registry.onChange((c) => changes.push(c));
  server = await startRegistryServer(registry, logger);
  raw = registryClient(server.address);
});
after(async () => {
  raw.close();
  registry.close();
  server.kill();
  await fixture.close();
});

describe("an edge agent with the control-plane client", () => {
  let agent: { registry: ModelRegistry; loads: string[]; client: ControlPlaneClient };
  before(() => {
    config.set("agent-1", [tiny]);
    const counted = countingRegistry(fixture);
    const client = connectControlPlane({
      address: server.address,
      agentId: "agent-1",
      node: "node-a",
      advertiseAddress: "127.0.0.1:18088",
      labels: { arch: "x64" },
      registry: counted.registry,
      capacity: { maxConcurrent: 1, maxQueue: 4 },
      load: () => ({ inFlight: 2, queued: 1 }),
      logger,
      backoff: { initialMs: 20, maxMs: 200 },
    });
    agent = { ...counted, client };
  });
  after(async () => {
    await agent.client.close();
    await agent.registry.close();
  });

  test("hello → welcome → assignment → the agent loads the model → ACK; listed with its models and load after heartbeats", async () => {
    const version = assignmentVersion([tiny]);
    const view = await eventually(() => {
      const v = registry.get("agent-1");
      return v?.ackedVersion === version && v.models.length === 1 && v.load.inFlight === 2 && v;
    }, "the registry records the ACK, the model and the load");
    assert.deepEqual(view.models, [{ id: "tiny", engine: "llamacpp" }]);
    assert.deepEqual(view.load, { inFlight: 2, queued: 1 });
    assert.deepEqual(view.capacity, { maxConcurrent: 1, maxQueue: 4 });
    assert.deepEqual(view.labels, { arch: "x64" });
    assert.equal(view.node, "node-a");
    assert.equal(view.address, "127.0.0.1:18088");
    assert.equal(view.lastNack, undefined);
    assert.deepEqual(agent.loads, ["tiny"]);
    assert.deepEqual(
      agent.registry.list().map((m) => m.id),
      ["tiny"],
    );
    const status = agent.client.status();
    assert.equal(status.connected, true);
    assert.equal(status.ackedVersion, version);
    assert.equal(status.sessionId, view.sessionId);
    assert.ok(changes.some((c) => c.kind === "joined" && c.agent.agentId === "agent-1"));
  });

  test("a changed assignment loads what is new, unloads what is gone, and reloads nothing it keeps", async () => {
    const kept = agent.registry.get("tiny").model;
    const second: ModelSpec = { id: "tiny-2", engine: "llamacpp", source: await fixture.write("tiny-2.gguf", { seed: 2 }), threads: 1, context_length: 256 };
    config.set("agent-1", [tiny, second]);
    registry.reassign();
    const both = assignmentVersion([tiny, second]);
    await eventually(() => registry.get("agent-1")?.ackedVersion === both, "ACK of the two-model assignment");
    assert.deepEqual(agent.loads, ["tiny", "tiny-2"]);
    assert.equal(agent.registry.get("tiny").model, kept, "the kept model is the same object: not reloaded");
    config.set("agent-1", [tiny]);
    registry.reassign();
    await eventually(() => registry.get("agent-1")?.ackedVersion === assignmentVersion([tiny]), "ACK of the one-model assignment");
    assert.deepEqual(
      agent.registry.list().map((m) => m.id),
      ["tiny"],
    );
    assert.equal(agent.registry.get("tiny").model, kept);
    await eventually(() => registry.get("agent-1")?.models.length === 1, "heartbeats report the unload");
  });

  test("NACK: a model whose source does not exist is refused with the error; the agent keeps its models; the registry records it", async () => {
    const kept = agent.registry.get("tiny").model;
    const missing = path.join(fixture.dir, "no-such-model.gguf");
    const before = agent.loads.length;
    config.set("agent-1", [tiny, { id: "ghost", engine: "llamacpp", source: missing, threads: 1 }]);
    registry.reassign();
    const nack = await eventually(() => registry.get("agent-1")?.lastNack, "the registry records the NACK");
    assert.equal(nack.version, registry.get("agent-1")?.assignedVersion);
    assert.match(nack.error, /no-such-model\.gguf/);
    assert.equal(registry.get("agent-1")?.ackedVersion, assignmentVersion([tiny]), "the acked version stays the last applied one");
    assert.deepEqual(
      agent.registry.list().map((m) => m.id),
      ["tiny"],
    );
    assert.equal(agent.registry.get("tiny").model, kept);
    assert.deepEqual(agent.loads.slice(before), ["ghost"], "one attempt, nothing else loaded");
    assert.match(agent.client.status().lastError, /^NACK [0-9a-f]{16}: .*no-such-model/);
    assert.equal(agent.client.status().ackedVersion, assignmentVersion([tiny]));
    config.set("agent-1", [tiny]);
    registry.reassign();
    await eventually(() => registry.get("agent-1")?.lastNack === undefined, "the next ACK clears the NACK");
  });

  test("an assignment the agent cannot even read (duplicate ids, unknown engine, no source) is NACKed with every reason and loads nothing", async () => {
    const before = agent.loads.length;
    config.set("agent-1", [tiny, { ...tiny }, { id: "x", engine: "tensorrt", source: "/m/x" }, { id: "y", engine: "llamacpp", source: "" }]);
    registry.reassign();
    const nack = await eventually(() => registry.get("agent-1")?.lastNack, "NACK");
    assert.match(nack.error, /^invalid assignment: /);
    assert.match(nack.error, /models\[1\] \('tiny'\): id assigned twice/);
    assert.match(nack.error, /unknown engine 'tensorrt'/);
    assert.match(nack.error, /source is required/);
    assert.equal(agent.loads.length, before);
    config.set("agent-1", [tiny]);
    registry.reassign();
    await eventually(() => registry.get("agent-1")?.lastNack === undefined, "recovered");
  });
});

describe("protocol errors (raw streams)", () => {
  test("a first message other than hello ends the stream with INVALID_ARGUMENT; the server stays up", async () => {
    const stream = openRaw(raw);
    stream.send({ heartbeat: { in_flight: 1 } });
    const status = await stream.status;
    assert.equal(status.code, grpc.status.INVALID_ARGUMENT);
    assert.equal(status.details, "EdgeRegistryService/Connect: the first message must be hello, got heartbeat");
    assert.equal(stream.responses.length, 0);
    const ok = openRaw(raw);
    ok.send(helloFor("after-bad-first"));
    assert.equal((await ok.response(0)).kind, "welcome");
    ok.call.end();
    assert.equal((await ok.status).code, grpc.status.OK);
    await eventually(() => registry.get("after-bad-first") === undefined, "the agent that closed its stream is removed");
  });

  test("a bad hello is refused naming each bad field; nothing is registered", async () => {
    const stream = openRaw(raw);
    stream.send({ hello: { agent_id: "bad-hello", node: "", address: "edge.local:8088" } });
    const status = await stream.status;
    assert.equal(status.code, grpc.status.INVALID_ARGUMENT);
    assert.equal(
      status.details,
      "invalid hello: hello.node is required; hello.address: 'edge.local:8088' does not start with an IP address (Envoy dials it without DNS)",
    );
    assert.equal(registry.get("bad-hello"), undefined);
  });

  test("a second hello on a stream ends it and removes the agent", async () => {
    const stream = openRaw(raw);
    stream.send(helloFor("twice"));
    await stream.response(0);
    assert.ok(registry.get("twice"));
    stream.send(helloFor("twice"));
    const status = await stream.status;
    assert.equal(status.code, grpc.status.INVALID_ARGUMENT);
    assert.match(status.details, /hello sent twice on one stream/);
    assert.equal(registry.get("twice"), undefined);
  });

  test("a second connection with the same agent id replaces the first, whose stream ends with ABORTED", async () => {
    const first = openRaw(raw);
    first.send(helloFor("dup"));
    const firstWelcome = await first.response(0);
    const second = openRaw(raw);
    second.send(helloFor("dup", { address: "127.0.0.2:8088" }));
    const secondWelcome = await second.response(0);
    const status = await first.status;
    assert.equal(status.code, grpc.status.ABORTED);
    assert.match(status.details, /agent 'dup' connected again/);
    const view = registry.get("dup");
    assert.equal(view?.sessionId, secondWelcome.welcome?.session_id);
    assert.notEqual(view?.sessionId, firstWelcome.welcome?.session_id);
    assert.equal(view?.address, "127.0.0.2:8088");
    second.call.cancel();
    await eventually(() => registry.get("dup") === undefined, "a cancelled stream removes the agent");
  });
});

describe("expiry", () => {
  const streams: RawAgent[] = [];
  afterEach(() => streams.splice(0).forEach((s) => s.call.cancel()));

  test("an agent that says hello and then nothing is removed after the expiry, its stream ended, onChange told; a heartbeating one stays", async () => {
    const silent = openRaw(raw);
    const alive = openRaw(raw);
    streams.push(silent, alive);
    silent.send(helloFor("silent"));
    alive.send(helloFor("alive"));
    await Promise.all([silent.response(0), alive.response(0)]);
    const beat = setInterval(() => alive.send({ heartbeat: { in_flight: 0 } }), 50);
    try {
      const status = await silent.status;
      assert.equal(status.code, grpc.status.DEADLINE_EXCEEDED);
      assert.match(status.details, /no heartbeat from agent 'silent' for \d+ ms \(expiry 1000 ms\)/);
      assert.equal(registry.get("silent"), undefined);
      assert.ok(changes.some((c) => c.kind === "left" && c.reason === "expired" && c.agent.agentId === "silent"));
      assert.ok(registry.get("alive"), "the heartbeating agent is still listed");
      assert.equal(
        changes.some((c) => c.kind === "left" && c.agent.agentId === "alive"),
        false,
      );
    } finally {
      clearInterval(beat);
    }
  });
});
