/** The worker-thread vector index: scopes, removal under churn (usearch's key-table tombstones), crashes, and loading without tsx flags. */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { silentLogger } from "../../../common/telemetry/logger.ts";
import { WorkerIndex } from "./index-client.ts";

const vec = (...values: number[]) => Float32Array.from({ length: 4 }, (_, i) => values[i] ?? 0);

test("index: searches see only their scope; an emptied scope is dropped", async () => {
  const index = new WorkerIndex({ dimensions: 4, logger: silentLogger() });
  try {
    index.add("a", "x", vec(1));
    index.add("a", "y", vec(0.8, 0.6));
    index.add("b", "z", vec(1));
    assert.deepEqual(
      (await index.search("a", vec(1), 5)).map((h) => h.id),
      ["x", "y"],
    );
    assert.deepEqual(
      (await index.search("b", vec(1), 5)).map((h) => h.id),
      ["z"],
    );
    assert.deepEqual(await index.search("c", vec(1), 5), []);
    index.remove("z");
    assert.deepEqual(await index.search("b", vec(1), 5), []);
    const stats = await index.stats();
    assert.equal(stats.scopes, 1);
    assert.equal(stats.size, 2);
  } finally {
    await index.close();
  }
});

test("index: 20,000 adds and removes in one scope keep size and answers exact (key-table compactions)", async () => {
  const index = new WorkerIndex({ dimensions: 4, logger: silentLogger() });
  try {
    const live: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const id = `e${i}`;
      index.add("s", id, vec(Math.cos(i), Math.sin(i), (i % 7) / 7, 1));
      live.push(id);
      if (live.length > 100 + (i % 300)) index.remove(live.shift()!);
      if (i % 1000 === 0) await index.flush();
    }
    const stats = await index.stats();
    assert.equal(stats.size, live.length);
    assert.equal(index.size, live.length);
    assert.ok(stats.compactions > 0, "the churn needed compactions");
    const hits = await index.search("s", vec(1, 0, 0, 1), 50);
    assert.equal(hits.length, 50);
    const held = new Set(live);
    assert.ok(
      hits.every((h) => held.has(h.id)),
      "only live ids are answers",
    );
  } finally {
    await index.close();
  }
});

test("index: a worker crash answers [] and restarts empty; reset listeners re-add", async () => {
  const index = new WorkerIndex({ dimensions: 4, logger: silentLogger() });
  try {
    let resets = 0;
    index.onReset(() => {
      resets++;
      index.add("s", "x", vec(1));
    });
    index.add("s", "x", vec(1));
    index.injectCrash();
    assert.deepEqual(await index.search("s", vec(1), 1), []);
    let hits: string[] = [];
    for (let i = 0; i < 200 && hits.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      hits = (await index.search("s", vec(1), 1)).map((h) => h.id);
    }
    assert.deepEqual(hits, ["x"]);
    assert.equal(resets, 1);
    assert.equal((await index.stats()).restarts, 1);
  } finally {
    await index.close();
  }
});

test("index: the worker loads when the process registered tsx by API (bin/gearbox.mjs), without --import", async () => {
  const client = new URL("./index-client.ts", import.meta.url).href;
  const logger = new URL("../../../common/telemetry/logger.ts", import.meta.url).href;
  const script = `
    import { register } from "tsx/esm/api";
    register();
    const { WorkerIndex } = await import(${JSON.stringify(client)});
    const { silentLogger } = await import(${JSON.stringify(logger)});
    const index = new WorkerIndex({ dimensions: 2, logger: silentLogger() });
    index.add("s", "only", new Float32Array([1, 0]));
    console.log(JSON.stringify(await index.search("s", new Float32Array([1, 0]), 1)));
    await index.close();`;
  const cwd = fileURLToPath(new URL("../../..", import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { cwd });
  assert.deepEqual(JSON.parse(stdout), [{ id: "only", similarity: 1 }]);
});
