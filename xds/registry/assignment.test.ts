import assert from "node:assert/strict";
import { test } from "node:test";
import { assignmentVersion, canonicalModels, type ModelSpec } from "./assignment.ts";

const A: ModelSpec = { id: "qwen", engine: "llamacpp", source: "/models/qwen.gguf", threads: 2 };
const B: ModelSpec = { id: "embed", engine: "onnx", source: "/models/e5.onnx", tokenizer: "/models/e5.json" };

test("the version is the content's: a fixed value for fixed content, in any process", () => {
  // A literal, so a version that depended on the process (a counter, a random salt, the order
  // of a Map) would fail here: a restarted control plane must compute the same string. It is
  // `printf '%s' '<canonical JSON>' | sha256sum | cut -c1-16`, with the models sorted by id.
  assert.equal(assignmentVersion([A, B]), "ebb381aaf522634a");
  assert.equal(assignmentVersion([]), assignmentVersion([]));
});

test("the order of the models and fields left at their defaults do not change the version", () => {
  assert.equal(assignmentVersion([B, A]), assignmentVersion([A, B]));
  assert.equal(assignmentVersion([{ ...B, threads: 0, context_length: 0 }]), assignmentVersion([B]));
  assert.deepEqual(
    canonicalModels([A, { ...B, threads: 0 }]).map((m) => m.id),
    ["embed", "qwen"],
  );
  assert.equal("threads" in (canonicalModels([{ ...B, threads: 0 }])[0] ?? {}), false);
});

test("any change of content changes the version", () => {
  const base = assignmentVersion([A]);
  for (const changed of [
    { ...A, source: "/models/other.gguf" },
    { ...A, threads: 3 },
    { ...A, context_length: 2048 },
    { ...A, engine: "ollama" },
    { ...A, id: "qwen2" },
  ]) {
    assert.notEqual(assignmentVersion([changed]), base, JSON.stringify(changed));
  }
  assert.notEqual(assignmentVersion([A, B]), base);
  assert.notEqual(assignmentVersion([]), base);
});
