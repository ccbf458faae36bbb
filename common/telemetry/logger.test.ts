import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { isoTime } from "./logger.ts";

const LOGGER = fileURLToPath(new URL("./logger.ts", import.meta.url));

test("createLogger: lines still buffered when the process exits are written out, in order, as JSON, multi-byte text whole", () => {
  // 5,000 lines logged in one turn, then process.exit: none can have been written asynchronously yet.
  const script = `
    import { createLogger } from ${JSON.stringify(LOGGER)};
    const log = createLogger("info", "t");
    for (let i = 0; i < 5000; i++) log.info({ i, text: i % 7 === 0 ? "数据边界 ✓ 😀 " + i : "plain" }, "line");
    process.exit(0);
  `;
  const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8" });
  const lines = out
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { i: number; text: string; component: string; msg: string });
  assert.equal(lines.length, 5000);
  // Multi-byte text whole: lines are batched as bytes, not characters.
  assert.deepEqual(
    lines.filter((l) => l.i % 7 === 0).map((l) => l.text),
    lines.filter((l) => l.i % 7 === 0).map((l) => `数据边界 ✓ 😀 ${l.i}`),
  );
  assert.deepEqual(
    lines.map((l) => l.i),
    Array.from({ length: 5000 }, (_, i) => i),
  );
  assert.equal(lines[0]?.component, "t");
});

test("createLogger: a lone line is written within the flush interval, while the process runs on", async () => {
  // One line, far below a batch; the process then idles for 10 s: only the periodic flush can write it.
  const script = `
    import { createLogger } from ${JSON.stringify(LOGGER)};
    createLogger("info", "t").info({ lone: true }, "line");
    process.stderr.write("logged\\n");
    setTimeout(() => process.exit(0), 10_000);
  `;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
  let loggedAt: number | undefined;
  child.stderr.on("data", (chunk: Buffer) => {
    if (chunk.toString("utf8").includes("logged")) loggedAt ??= performance.now();
  });
  const line = await new Promise<string>((resolve) => {
    let text = "";
    child.stdout.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
      if (text.includes("\n")) resolve(text);
    });
  });
  const arrivedAt = performance.now();
  child.kill("SIGKILL");
  assert.equal((JSON.parse(line) as { lone: boolean }).lone, true);
  // 20 ms in principle; a loaded machine gets a second. The exit flush would come after 10 s.
  assert.ok(arrivedAt - (loggedAt ?? arrivedAt) < 1_000, `the line took ${(arrivedAt - (loggedAt ?? 0)).toFixed(0)} ms`);
});

test("createLogger: an idle logger writes nothing (no empty flush every interval)", () => {
  // sonic-boom's own periodic flush wrote an empty string through the thread pool every 20 ms
  // whether or not a line waited: 25 writes in half a second of idling after one line.
  const script = `
    import fs from "node:fs";
    const write = fs.write;
    let writes = 0;
    fs.write = (...args) => { writes++; return write(...args); };
    const { createLogger } = await import(${JSON.stringify(LOGGER)});
    createLogger("info", "t").info({ lone: true }, "line");
    setTimeout(() => { process.stderr.write(String(writes)); process.exit(0); }, 500);
  `;
  const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8" });
  assert.equal((JSON.parse(run.stdout.trim()) as { lone: boolean }).lone, true);
  assert.equal(run.stderr.trim(), "1", "one write for the one line, none while idle");
});

test("createLogger: lines logged while a write is in flight are written once it ends, not left waiting for the next line", async () => {
  // Every write takes 200 ms (a slow reader): a line, then three more 50 ms later while its write
  // is in flight, then nothing. The three are under a batch, and their flush interval ends while
  // the first write is still out: they must leave on their own, not with the exit flush 5 s on.
  const script = `
    import fs from "node:fs";
    const write = fs.write;
    fs.write = (...args) => {
      const done = args.pop();
      write(...args, (...result) => setTimeout(() => done(...result), 200));
    };
    const { createLogger } = await import(${JSON.stringify(LOGGER)});
    const log = createLogger("info", "t");
    log.info({ first: true }, "line");
    setTimeout(() => { for (let i = 0; i < 3; i++) log.info({ i }, "behind"); }, 50);
    setTimeout(() => process.exit(0), 5_000);
  `;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  let text = "";
  let firstAt = 0;
  const lastAt = await new Promise<number>((resolve) => {
    child.stdout.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
      if (firstAt === 0 && text.includes('"first"')) firstAt = performance.now();
      if ((text.match(/"behind"/g) ?? []).length === 3) resolve(performance.now());
    });
  });
  child.kill("SIGKILL");
  assert.ok(lastAt - firstAt < 2_000, `the three lines came ${(lastAt - firstAt).toFixed(0)} ms after the first`);
});

test("createLogger: a reader that stalls costs dropped lines, counted, never a blocked event loop", async () => {
  // Nobody reads stdout while 40 MB of lines are logged: the pipe fills, 16 MiB wait, the rest are dropped and counted.
  const script = `
    const { createLogger, logStats } = await import(${JSON.stringify(LOGGER)});
    const log = createLogger("info", "t");
    const pad = "x".repeat(1000);
    const started = performance.now();
    for (let i = 0; i < 40_000; i++) {
      log.info({ i, pad }, "line");
      if (i % 1000 === 0) await new Promise((r) => setImmediate(r));
    }
    process.stderr.write(JSON.stringify({ dropped: logStats.dropped, ms: performance.now() - started }) + "\\n");
  `;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.pause();
  const report = await new Promise<string>((resolve) => {
    let text = "";
    child.stderr.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
      if (text.includes("\n")) resolve(text);
    });
  });
  // Now read, so the exit flush can finish.
  let lines = 0;
  child.stdout.on("data", (chunk: Buffer) => void (lines += chunk.toString("utf8").split("\n").length - 1));
  child.stdout.resume();
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  const { dropped } = JSON.parse(report) as { dropped: number; ms: number };
  assert.equal(code, 0);
  assert.ok(dropped > 10_000 && dropped < 40_000, `${dropped} lines dropped`);
  // Every line was either written or counted as dropped.
  assert.equal(lines + dropped, 40_000);
});

test("isoTime: the same field as pino's isoTime, millisecond by millisecond across second, day and year boundaries", () => {
  const starts = [Date.UTC(2026, 11, 3, 13, 45, 12), Date.UTC(2026, 11, 31, 23, 59, 59), Date.UTC(2028, 1, 29, 0, 0, 0), 0];
  for (const start of starts)
    for (let t = start - 1_003; t < start + 2_003; t++) {
      if (t < 0) continue;
      assert.equal(isoTime(t), `,"time":"${new Date(t).toISOString()}"`);
    }
  // Out of order, as timers may ask: each answer stands alone.
  for (const t of [Date.UTC(2026, 0, 1, 0, 0, 0, 7), Date.UTC(2025, 5, 6, 7, 8, 9, 70), Date.UTC(2026, 0, 1, 0, 0, 0, 999)])
    assert.equal(isoTime(t), `,"time":"${new Date(t).toISOString()}"`);
});
