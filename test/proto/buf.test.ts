/**
 * Gearbox's own protos (`proto/gearbox/v1/`) build and pass buf's STANDARD lint, offline, with
 * the buf binary pinned in devDependencies. A broken proto fails here before any code loads it.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, writeFile, cp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
const BUF = path.join(ROOT, "node_modules/.bin/buf");

test("buf build and buf lint pass on proto/", async () => {
  await run(BUF, ["build", "proto"], { cwd: ROOT });
  const lint = await run(BUF, ["lint", "proto"], { cwd: ROOT });
  assert.equal(lint.stdout.trim(), "");
});

test("buf lint fails on a proto that breaks the STANDARD rules (the check can fail)", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "buf-"));
  await cp(path.join(ROOT, "proto/buf.yaml"), path.join(dir, "buf.yaml"));
  await writeFile(path.join(dir, "bad.proto"), 'syntax = "proto3";\npackage gearbox.v1;\nmessage bad_name { string X = 1; }\n');
  await assert.rejects(run(BUF, ["lint", dir], { cwd: dir }), (err: { stdout?: string }) => /bad_name|PascalCase|lower_snake_case/i.test(err.stdout ?? ""));
});
