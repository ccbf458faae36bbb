/**
 * The registry without gRPC: links that record what would go on the wire, a clock the test
 * moves, and node:test's mocked `setInterval` driving the one sweeping timer.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, mock, test } from "node:test";
import { silentLogger } from "../../common/telemetry/logger.ts";
import { assignmentVersion, type ModelSpec } from "./assignment.ts";
import type { AgentHello } from "../../common/registry/hello.ts";
import { EdgeRegistry, type EdgeRegistryOptions, type EndReason, type RegistryChange, type SessionLink } from "./registry.ts";
import type { ConnectResponse } from "../../common/registry/wire.ts";

interface RecordingLink extends SessionLink {
  sent: ConnectResponse[];
  ended: { reason: EndReason; details: string }[];
}

function link(): RecordingLink {
  const sent: ConnectResponse[] = [];
  const ended: { reason: EndReason; details: string }[] = [];
  return { sent, ended, send: (m) => sent.push(m), end: (reason, details) => ended.push({ reason, details }) };
}

const hello = (agentId: string, ackedVersion = ""): AgentHello => ({
  agentId,
  node: "node-a",
  address: "10.0.0.7:8088",
  models: [],
  capacity: { maxConcurrent: 1, maxQueue: 8 },
  ackedVersion,
  labels: {},
});

const QWEN: ModelSpec = { id: "qwen", engine: "llamacpp", source: "/m/qwen.gguf" };

let clock = 0;
let assignments: Record<string, readonly ModelSpec[] | undefined>;
let changes: RegistryChange[];

function registry(options: Partial<EdgeRegistryOptions> = {}): EdgeRegistry {
  const r = new EdgeRegistry({ heartbeatIntervalMs: 100, now: () => clock, logger: silentLogger(), assignmentsFor: (a) => assignments[a.agentId], ...options });
  r.onChange((c) => changes.push(c));
  return r;
}

/** Moves the clock and runs the timers due. */
function advance(ms: number): void {
  clock += ms;
  mock.timers.tick(ms);
}

beforeEach(() => {
  mock.timers.enable({ apis: ["setInterval"] });
  clock = 1_000;
  assignments = { a: [QWEN] };
  changes = [];
});
afterEach(() => mock.timers.reset());

describe("sessions", () => {
  test("connect: welcome with the intervals, then the assignment (version = content hash, a nonce); the agent is listed", () => {
    const r = registry();
    const l = link();
    const session = r.connect(hello("a"), l);
    assert.deepEqual(l.sent[0], {
      welcome: { session_id: session.id, heartbeat_interval: { seconds: "0", nanos: 100e6 }, expiry: { seconds: "0", nanos: 300e6 } },
    });
    const assignment = l.sent[1]?.assignment;
    assert.equal(assignment?.version, assignmentVersion([QWEN]));
    assert.ok(assignment?.nonce);
    assert.deepEqual(assignment?.assignment, { agent_id: "a", models: [{ id: "qwen", engine: "llamacpp", source: "/m/qwen.gguf" }] });
    assert.equal(l.sent.length, 2);
    assert.deepEqual(
      r.agents().map((v) => [v.agentId, v.sessionId, v.assignedVersion, v.ackedVersion]),
      [["a", session.id, assignmentVersion([QWEN]), ""]],
    );
    assert.deepEqual(
      changes.map((c) => c.kind),
      ["joined"],
    );
  });

  test("resume: a hello that reports the current version gets a welcome and nothing else", () => {
    const r = registry();
    const l = link();
    r.connect(hello("a", assignmentVersion([QWEN])), l);
    assert.deepEqual(
      l.sent.map((m) => Object.keys(m)),
      [["welcome"]],
    );
    assert.equal(r.get("a")?.ackedVersion, assignmentVersion([QWEN]));
  });

  test("no assignment for an agent (undefined): welcome only; an assignment function that throws is the same, logged", () => {
    const r = registry({ assignmentsFor: (a) => (a.agentId === "boom" ? assert.fail("config bug") : undefined) });
    const quiet = link();
    const boom = link();
    r.connect(hello("quiet"), quiet);
    r.connect(hello("boom"), boom);
    assert.equal(quiet.sent.length, 1);
    assert.equal(boom.sent.length, 1);
    assert.equal(r.agents().length, 2);
  });

  test("a second connection with the same agent id replaces the first: the old stream is ended, its late messages are ignored", () => {
    const r = registry();
    const first = link();
    const old = r.connect(hello("a"), first);
    const second = link();
    const current = r.connect(hello("a"), second);
    assert.equal(first.ended[0]?.reason, "replaced");
    assert.match(first.ended[0]?.details ?? "", new RegExp(`${current.id} replaces ${old.id}`));
    assert.deepEqual(
      r.agents().map((a) => a.sessionId),
      [current.id],
    );
    old.heartbeat({ inFlight: 9, queued: 9 }, []);
    old.end();
    assert.equal(r.get("a")?.sessionId, current.id, "the old stream's end does not remove the new session");
    assert.deepEqual(r.get("a")?.load, { inFlight: 0, queued: 0 });
    assert.equal(second.ended.length, 0);
    assert.deepEqual(
      changes.map((c) => c.kind),
      ["joined", "joined"],
    );
  });

  test("the end of a stream removes the agent at once", () => {
    const r = registry();
    const session = r.connect(hello("a"), link());
    session.end();
    assert.equal(r.agents().length, 0);
    assert.deepEqual(changes.at(-1), { kind: "left", agent: changes.at(-1)?.agent, reason: "disconnected" });
    assert.equal(r.stats().sweeping, false);
  });

  test("heartbeats update load and models; an unchanged heartbeat is counted but not announced", () => {
    const r = registry();
    const session = r.connect(hello("a"), link());
    advance(50);
    session.heartbeat({ inFlight: 2, queued: 1 }, [{ id: "qwen", engine: "llamacpp" }]);
    session.heartbeat({ inFlight: 2, queued: 1 }, [{ id: "qwen", engine: "llamacpp" }]);
    const view = r.get("a");
    assert.deepEqual(view?.load, { inFlight: 2, queued: 1 });
    assert.deepEqual(view?.models, [{ id: "qwen", engine: "llamacpp" }]);
    assert.equal(view?.lastHeartbeatAt, 1_050);
    assert.equal(r.stats().heartbeats, 2);
    assert.deepEqual(
      changes.map((c) => c.kind),
      ["joined", "updated"],
    );
  });

  test("close ends every stream and refuses later connections", () => {
    const r = registry();
    const l = link();
    r.connect(hello("a"), l);
    r.close();
    assert.deepEqual(
      l.ended.map((e) => e.reason),
      ["closed"],
    );
    assert.deepEqual(r.stats(), { agents: 0, heartbeats: 0, sweeping: false });
    const late = link();
    r.connect(hello("b"), late);
    assert.deepEqual(
      late.ended.map((e) => e.reason),
      ["closed"],
    );
    assert.equal(late.sent.length, 0);
    assert.equal(r.agents().length, 0);
  });

  test("a listener that throws does not stop the others or the registry", () => {
    const r = registry();
    r.onChange(() => assert.fail("listener bug"));
    const seen: string[] = [];
    const unsubscribe = r.onChange((c) => seen.push(c.kind));
    r.connect(hello("a"), link());
    unsubscribe();
    r.connect(hello("b"), link());
    assert.deepEqual(seen, ["joined"]);
    assert.equal(r.agents().length, 2);
  });

  test("options: the expiry must exceed the heartbeat interval", () => {
    assert.throws(
      () => new EdgeRegistry({ heartbeatIntervalMs: 100, expiryMs: 100, assignmentsFor: () => undefined }),
      /expiryMs \(100\) must exceed heartbeatIntervalMs \(100\)/,
    );
    assert.throws(() => new EdgeRegistry({ heartbeatIntervalMs: 0, assignmentsFor: () => undefined }), /positive/);
  });
});

describe("acks", () => {
  test("ACK by nonce records the version; a stale nonce is ignored", () => {
    const r = registry();
    const l = link();
    const session = r.connect(hello("a"), l);
    const { version, nonce } = l.sent[1]?.assignment ?? {};
    assert.deepEqual(session.answer({ version, nonce: "not-the-nonce" }), { kind: "stale" });
    assert.equal(r.get("a")?.ackedVersion, "");
    assert.deepEqual(session.answer({ version, nonce }), { kind: "acked", version });
    assert.equal(r.get("a")?.ackedVersion, version);
    assert.deepEqual(session.answer({ version, nonce }), { kind: "stale" }, "answered once");
  });

  test("NACK is recorded and not re-sent until the content changes; the next ACK clears it", () => {
    const r = registry();
    const l = link();
    const session = r.connect(hello("a"), l);
    const first = l.sent[1]?.assignment ?? {};
    assert.deepEqual(session.answer({ version: first.version, nonce: first.nonce, error_detail: "no such file" }), {
      kind: "nacked",
      version: first.version,
      error: "no such file",
    });
    assert.deepEqual(r.get("a")?.lastNack, { version: first.version, error: "no such file", at: 1_000 });
    r.reassign();
    assert.equal(l.sent.length, 2, "same content: not re-sent");
    assignments = { a: [{ ...QWEN, source: "/m/qwen-fixed.gguf" }] };
    r.reassign();
    const second = l.sent[2]?.assignment ?? {};
    assert.notEqual(second.version, first.version);
    assert.notEqual(second.nonce, first.nonce);
    session.answer({ version: second.version, nonce: second.nonce });
    assert.equal(r.get("a")?.lastNack, undefined);
    assert.equal(r.get("a")?.ackedVersion, second.version);
  });

  test("reassign sends only to agents whose assignment changed; an answer to a superseded assignment is stale", () => {
    const r = registry();
    assignments = { a: [QWEN], b: [QWEN] };
    const la = link();
    const lb = link();
    const sa = r.connect(hello("a"), la);
    r.connect(hello("b"), lb);
    const superseded = la.sent[1]?.assignment ?? {};
    assignments = { a: [], b: [QWEN] };
    r.reassign();
    assert.equal(la.sent.length, 3);
    assert.deepEqual(la.sent[2]?.assignment?.assignment?.models, []);
    assert.equal(lb.sent.length, 2);
    assert.deepEqual(sa.answer({ version: superseded.version, nonce: superseded.nonce }), { kind: "stale" });
  });
});

describe("expiry", () => {
  test("an agent silent for the expiry is removed and its stream ended; a heartbeating one stays; one timer, stopped when empty", () => {
    const r = registry();
    const silentLink = link();
    r.connect(hello("silent"), silentLink);
    const alive = r.connect(hello("alive"), link());
    assert.equal(r.stats().sweeping, true);
    for (let t = 0; t < 4; t++) {
      advance(100);
      alive.heartbeat({ inFlight: 0, queued: 0 }, []);
    }
    assert.deepEqual(
      r.agents().map((a) => a.agentId),
      ["alive"],
    );
    assert.equal(silentLink.ended[0]?.reason, "expired");
    assert.match(silentLink.ended[0]?.details ?? "", /no heartbeat from agent 'silent' for 300 ms/);
    const left = changes.find((c) => c.kind === "left");
    assert.deepEqual(left && { id: left.agent.agentId, reason: left.kind === "left" && left.reason }, { id: "silent", reason: "expired" });
    advance(400);
    assert.equal(r.agents().length, 0);
    assert.equal(r.stats().sweeping, false, "no timer once no agent is listed");
  });

  test("not before the expiry", () => {
    const r = registry();
    r.connect(hello("a"), link());
    advance(200);
    assert.equal(r.agents().length, 1);
  });
});
