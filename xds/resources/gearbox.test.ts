import assert from "node:assert/strict";
import { test } from "node:test";
import { packAny, TYPE_URLS, unpackAny } from "../../common/control-plane/protos.ts";
import { decodeEdgeAssignment, decodeRoutingPolicy, edgeAssignmentResource, routingPolicyResource, type EdgeAssignment } from "./gearbox.ts";

test("a routing policy carries the route section as JSON, in and out", () => {
  const route = {
    rules: [{ when: { intent: ["summarize"], estimated_complexity: "low" }, target: "edge" }],
    fallback: { enable: true, confidence_threshold: 0.6, upgrade_target: "cloud" },
  };
  const any = routingPolicyResource("default", route);
  assert.equal(any.type_url, TYPE_URLS.routingPolicy);
  assert.deepEqual(decodeRoutingPolicy(any), { name: "default", route });
});

test("an edge assignment round-trips; unset numbers (the engine's default) and the tokenizer only when set", () => {
  const assignment: EdgeAssignment = {
    agentId: "node-a-8088",
    models: [
      { id: "qwen3:0.6b", engine: "llamacpp", source: "/models/qwen3-0.6b.gguf", threads: 4, context_length: 4096 },
      { id: "minilm", engine: "onnx", source: "/models/minilm", tokenizer: "/models/minilm/tokenizer.json" },
    ],
  };
  const any = edgeAssignmentResource(assignment);
  assert.equal(unpackAny(any)["agent_id"], "node-a-8088");
  assert.deepEqual(decodeEdgeAssignment(any), { ...assignment, models: [...assignment.models].reverse() }, "models travel sorted by id");
  assert.deepEqual(decodeEdgeAssignment(edgeAssignmentResource({ agentId: "empty", models: [] })), { agentId: "empty", models: [] });
});

test("decoders refuse resources of another type and incomplete models", () => {
  assert.throws(
    () => decodeRoutingPolicy(edgeAssignmentResource({ agentId: "a", models: [] })),
    /expected a type\.googleapis\.com\/gearbox\.v1\.RoutingPolicy resource/,
  );
  assert.throws(() => decodeEdgeAssignment(routingPolicyResource("default", {})), /expected a .*EdgeAssignment/);
  const incomplete = packAny(TYPE_URLS.edgeAssignment, { agent_id: "a", models: [{ id: "m", engine: "llamacpp" }] });
  assert.throws(() => decodeEdgeAssignment(incomplete), /EdgeAssignment "a": models\[0\] needs id, engine and source/);
});
