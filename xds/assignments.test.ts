import assert from "node:assert/strict";
import { test } from "node:test";
import { assignmentFor } from "./assignments.ts";

const qwen = { id: "qwen", engine: "llamacpp" as const, source: "/models/qwen.gguf", threads: 2 };
const llama = { id: "llama", engine: "ollama" as const, source: "llama3.2" };
const assignments = [{ models: [qwen] }, { nodes: ["gpu-1"], models: [llama, { ...qwen, source: "/other.gguf" }] }];

test("entries without nodes apply everywhere; node entries only on their nodes; sorted; first spec wins", () => {
  assert.deepEqual(
    assignmentFor(assignments, "gpu-1").map((m) => [m.id, m.source]),
    [
      ["llama", "llama3.2"],
      ["qwen", "/models/qwen.gguf"],
    ],
  );
  assert.deepEqual(
    assignmentFor(assignments, "cpu-7").map((m) => m.id),
    ["qwen"],
  );
  assert.deepEqual(assignmentFor([], "cpu-7"), []);
  assert.equal(assignmentFor(assignments, "cpu-7")[0]?.context_length, undefined, "unset → the engine's default");
  assert.equal(assignmentFor(assignments, "cpu-7")[0]?.threads, 2);
});
