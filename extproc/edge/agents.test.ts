import assert from "node:assert/strict";
import { test } from "node:test";
import { LiveEdgeAgents, type LiveEdgeAgent } from "./agents.ts";

const agent = (over: Partial<LiveEdgeAgent>): LiveEdgeAgent => ({
  agentId: "a",
  node: "node-a",
  address: "10.0.0.1:8088",
  models: ["qwen"],
  inFlight: 0,
  queued: 0,
  maxConcurrent: 2,
  maxQueue: 8,
  healthy: true,
  ...over,
});

test("live agents: the caller's node first, then the least loaded; ties take turns", () => {
  const live = new LiveEdgeAgents();
  live.update([
    agent({ agentId: "a", node: "node-a", address: "10.0.0.1:8088", inFlight: 2 }),
    agent({ agentId: "b", node: "node-b", address: "10.0.0.2:8088", inFlight: 1 }),
    agent({ agentId: "c", node: "node-c", address: "10.0.0.3:8088", inFlight: 1 }),
  ]);
  assert.equal(live.pick("qwen", "node-a")?.address, "10.0.0.1:8088", "local even when busier");
  const picks = new Set([live.pick("qwen")?.address, live.pick("qwen")?.address]);
  assert.deepEqual([...picks].sort(), ["10.0.0.2:8088", "10.0.0.3:8088"], "the two least loaded, in turn");
  assert.notEqual(live.pick("qwen", "node-z")?.address, "10.0.0.1:8088", "an unknown node: least loaded");
});

test("live agents: unhealthy ones and unknown models are never picked; an update replaces the set", () => {
  const live = new LiveEdgeAgents();
  live.update([agent({ healthy: false }), agent({ agentId: "b", address: "10.0.0.2:8088", models: ["llama"] })]);
  assert.equal(live.serves("qwen"), false);
  assert.equal(live.pick("qwen"), undefined);
  assert.equal(live.pick("llama")?.address, "10.0.0.2:8088");
  live.update([]);
  assert.equal(live.serves("llama"), false);
  assert.equal(live.size, 0);
});

test("live agents: load is per unit of capacity", () => {
  const live = new LiveEdgeAgents();
  live.update([
    agent({ agentId: "big", address: "10.0.0.9:8088", inFlight: 4, maxConcurrent: 16 }),
    agent({ agentId: "small", address: "10.0.0.8:8088", inFlight: 1, maxConcurrent: 1 }),
  ]);
  assert.equal(live.pick("qwen")?.address, "10.0.0.9:8088");
});

test("static agents (edge.agents) are known before and beside the live ones; a live agent at the same address wins", () => {
  const live = new LiveEdgeAgents([
    { address: "10.0.0.9:8088", models: ["tiny"] },
    { address: "10.0.0.1:8088", models: ["qwen"], node: "node-a" },
  ]);
  // Before the control plane says anything: the config's agents serve.
  assert.equal(live.serves("tiny"), true);
  assert.equal(live.pick("tiny")?.address, "10.0.0.9:8088");
  assert.equal(live.pick("qwen")?.address, "10.0.0.1:8088");
  assert.equal(live.size, 2);
  // A live agent with the model is preferred to a static one (whose load is unknown).
  live.update([agent({ agentId: "b", node: "node-b", address: "10.0.0.2:8088", models: ["tiny"], inFlight: 2 })]);
  assert.equal(live.pick("tiny")?.address, "10.0.0.2:8088");
  live.update([]);
  assert.equal(live.pick("tiny")?.address, "10.0.0.9:8088", "the static agent again once the live one left");
  // The control plane registers the static address: its report (models, health) replaces the config's.
  live.update([agent({ agentId: "a", node: "node-a", address: "10.0.0.1:8088", models: ["llama"] })]);
  assert.equal(live.serves("qwen"), false, "the live registration's models, not the config's");
  assert.equal(live.pick("llama")?.address, "10.0.0.1:8088");
  live.update([agent({ agentId: "a", node: "node-a", address: "10.0.0.1:8088", models: ["qwen"], healthy: false })]);
  assert.equal(live.pick("qwen"), undefined, "reported unhealthy: not picked under its static entry either");
  assert.equal(live.size, 1, "the unrelated static agent stays");
});

test("static agents: one on the caller's node beats a live one elsewhere", () => {
  const live = new LiveEdgeAgents([{ address: "10.0.0.9:8088", models: ["qwen"], node: "node-a" }]);
  live.update([agent({ agentId: "b", node: "node-b", address: "10.0.0.2:8088" })]);
  assert.equal(live.pick("qwen", "node-a")?.address, "10.0.0.9:8088");
  assert.equal(live.pick("qwen", "node-b")?.address, "10.0.0.2:8088");
  assert.equal(live.pick("qwen")?.address, "10.0.0.2:8088");
});
