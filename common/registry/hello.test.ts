import assert from "node:assert/strict";
import { test } from "node:test";
import { addressError, parseHeartbeatModels, parseHello } from "./hello.ts";
import type { HelloMessage } from "./wire.ts";

const GOOD: HelloMessage = {
  agent_id: "node-a:8088",
  node: "node-a",
  address: "10.0.0.7:8088",
  models: [
    { id: "zeta", engine: "ollama" },
    { id: "alpha", engine: "llamacpp" },
  ],
  capacity: { max_concurrent: 2, max_queue: 8 },
  acked_version: "abc",
  labels: { gpu: "a10" },
};

test("a valid hello is normalised: models sorted by id, capacity and labels read", () => {
  const parsed = parseHello(GOOD);
  assert.ok(parsed.ok);
  assert.deepEqual(parsed.value, {
    agentId: "node-a:8088",
    node: "node-a",
    address: "10.0.0.7:8088",
    models: [
      { id: "alpha", engine: "llamacpp" },
      { id: "zeta", engine: "ollama" },
    ],
    capacity: { maxConcurrent: 2, maxQueue: 8 },
    ackedVersion: "abc",
    labels: { gpu: "a10" },
  });
});

test("fields a peer left at zero values (absent on the wire) read as defaults", () => {
  const parsed = parseHello({ agent_id: "a", node: "n", address: "[::1]:9" });
  assert.ok(parsed.ok);
  assert.deepEqual(parsed.value.models, []);
  assert.deepEqual(parsed.value.capacity, { maxConcurrent: 0, maxQueue: 0 });
  assert.equal(parsed.value.ackedVersion, "");
});

test("every bad field is named, all at once", () => {
  const parsed = parseHello({ agent_id: "", node: "has space", address: "", models: [{ engine: "llamacpp" }], labels: { "": "x" } });
  assert.equal(parsed.ok, false);
  if (parsed.ok) return;
  assert.deepEqual(parsed.errors, [
    "hello.agent_id is required",
    "hello.node must be 1-253 printable characters without spaces, got 'has space'",
    "hello.address is required",
    "hello.models[0].id is required",
    "hello.labels has an empty key",
  ]);
  assert.deepEqual(parseHello(undefined), { ok: false, errors: ["hello is empty"] });
});

test("addresses: ip:port only, as Envoy's ORIGINAL_DST cluster dials them", () => {
  for (const good of ["10.1.2.3:8088", "127.0.0.1:1", "[fd00::7]:8088", "[::1]:65535"]) assert.equal(addressError(good), undefined, good);
  const cases: [string, RegExp][] = [
    ["10.1.2.3", /not ip:port/],
    ["10.1.2.3:0", /not ip:port/],
    ["10.1.2.3:65536", /not ip:port/],
    ["edge.local:8088", /IP address.*without DNS/],
    ["fd00::7:8088", /not ip:port/],
    ["[10.1.2.3]:8088", /IP address/],
    ["0.0.0.0:8088", /unspecified/],
    ["[::]:8088", /unspecified/],
  ];
  for (const [bad, why] of cases) assert.match(addressError(bad) ?? "", why, bad);
  const parsed = parseHello({ ...GOOD, address: "edge.local:8088" });
  assert.ok(!parsed.ok && parsed.errors[0]?.startsWith("hello.address: 'edge.local:8088'"));
});

test("heartbeat models: sorted, and one without an id is an error", () => {
  assert.deepEqual(parseHeartbeatModels([{ id: "b", engine: "x" }, { id: "a" }]), {
    ok: true,
    value: [
      { id: "a", engine: "" },
      { id: "b", engine: "x" },
    ],
  });
  assert.deepEqual(parseHeartbeatModels(undefined), { ok: true, value: [] });
  assert.deepEqual(parseHeartbeatModels([{ engine: "x" }]), { ok: false, errors: ["heartbeat.models[0].id is required"] });
});
