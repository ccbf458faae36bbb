import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { parseGrade, parseLabelled } from "./labelled.ts";

const FIXTURE = new URL("../../../test/fixtures/routellm/mmlu_management.csv", import.meta.url);

test("RouteLLM's CSV: prompt, weak (edge) and strong (cloud) columns, grouped by file", () => {
  const parsed = parseLabelled(readFileSync(FIXTURE, "utf8"), "mmlu_management.csv");
  assert.ok(parsed.ok, parsed.ok ? "" : parsed.errors.join("; "));
  assert.equal(parsed.value.rows.length, 103);
  assert.deepEqual(parsed.value.columns, { edge: "mistralai/Mixtral-8x7B-Instruct-v0.1", cloud: "gpt-4-1106-preview", group: "(file name)" });
  assert.equal(parsed.value.rows[0]?.group, "mmlu_management");
  assert.match(parsed.value.rows[0]?.prompt ?? "", /^What is the term for a sub-optimal/);
});

test("named columns, scores and JSON lines", () => {
  const csv = 'id,prompt,cloud_correct,edge_correct,tenant\n1,hi,1,0.5,acme\n2,"a, b",True,False,beta\n';
  const parsed = parseLabelled(csv, "x.csv", { group: "tenant" });
  assert.ok(parsed.ok);
  assert.deepEqual(
    parsed.value.rows.map((r) => [r.prompt, r.edge, r.cloud, r.group]),
    [
      ["hi", 0.5, 1, "acme"],
      ["a, b", 0, 1, "beta"],
    ],
  );
  const jsonl = parseLabelled('{"prompt":"x","edge":true,"cloud":1,"intent":"qa"}\n\n', "d.jsonl");
  assert.ok(jsonl.ok);
  assert.deepEqual(jsonl.value.rows, [{ prompt: "x", edge: 1, cloud: 1, group: "d", intent: "qa" }]);
});

test("bad input names the file, the row and the column", () => {
  const bad = parseLabelled("prompt,edge,cloud\nhi,maybe,1\n", "bad.csv");
  assert.equal(bad.ok, false);
  assert.match(bad.ok ? "" : (bad.errors[0] ?? ""), /bad\.csv: row 2: edge 'maybe'/);
  const noPrompt = parseLabelled("q,edge,cloud\n", "n.csv");
  assert.match(noPrompt.ok ? "" : (noPrompt.errors[0] ?? ""), /no 'prompt' column/);
  const missing = parseLabelled("prompt,a,b\n", "m.csv", { edge: "zzz" });
  assert.match(missing.ok ? "" : (missing.errors[0] ?? ""), /edge column 'zzz' not found/);
  assert.equal(parseGrade("1.5"), undefined);
  assert.equal(parseGrade(" TRUE "), 1);
});
