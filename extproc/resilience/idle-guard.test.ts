import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import { idleGuarded, readAllGuarded } from "./idle-guard.ts";

const timeout = () => new Error("idle deadline");

test("readAllGuarded: chunks each within the deadline are read whole, however long the body takes", async () => {
  const source = new PassThrough();
  const read = readAllGuarded(source, 60, timeout);
  for (const part of ["a", "b", "c", "d"]) {
    source.write(part);
    await new Promise((r) => setTimeout(r, 30)); // 4 × 30 ms: past 60 ms in all, never 60 ms idle
  }
  source.end("e");
  assert.equal((await read).toString(), "abcde");
});

test("readAllGuarded: silence past the deadline destroys the source with the deadline's error", async () => {
  const source = new PassThrough();
  const read = readAllGuarded(source, 40, timeout);
  source.write("a");
  await assert.rejects(read, /idle deadline/);
  assert.equal(source.destroyed, true);
});

test("readAllGuarded: a source destroyed without an error (the call was aborted) rejects, never hangs", async () => {
  const source = new PassThrough();
  const read = readAllGuarded(source, 10_000, timeout);
  source.write("a");
  source.destroy();
  await assert.rejects(read, /ended before it was complete/);
});

test("idleGuarded: the deadline does not run while the reader holds a chunk, and runs again when it asks", async () => {
  const source = new PassThrough();
  const chunks: string[] = [];
  const reading = (async () => {
    for await (const chunk of idleGuarded(source, 40, timeout)) {
      chunks.push(chunk.toString());
      await new Promise((r) => setTimeout(r, 100)); // a slow reader: 100 ms holding each chunk
    }
  })();
  source.write("a");
  await new Promise((r) => setTimeout(r, 20));
  source.write("b"); // buffered while the reader is busy
  await assert.rejects(reading, /idle deadline/, "after 'b', nothing more comes within 40 ms of the reader asking");
  assert.deepEqual(chunks, ["a", "b"]);
});
