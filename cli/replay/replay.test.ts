/**
 * `gearbox replay` as a user runs it: the real CLI in a child process against a real running
 * `gearbox extproc` (front door and ext_proc gRPC) in front of the OpenAI emulator. Checks the
 * output lines against the gateway's own request log, malformed lines, --limit, --resume and
 * SIGINT.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { startOpenAIUpstream, type OpenAIUpstream } from "../../test/emulators/openai-upstream.ts";
import { eventually } from "../../test/support/eventually.ts";
import { freePorts, listenYaml, startGatewayProcess, type GatewayProcess } from "../../test/support/gateway-process.ts";

const GEARBOX = fileURLToPath(new URL("../../bin/gearbox.mjs", import.meta.url));
const dir = mkdtempSync(path.join(tmpdir(), "gearbox-replay-"));
let cloud: OpenAIUpstream;
let gateway: GatewayProcess;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function gearbox(args: string[], onStderr?: (text: string, child: ReturnType<typeof spawn>) => void): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [GEARBOX, ...args], { env: { PATH: process.env.PATH ?? "" }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
      onStderr?.(stderr, child);
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const chat = (content: string, extra: Record<string, unknown> = {}) => ({
  model: "gpt-4o-mini",
  messages: [{ role: "user", content }],
  temperature: 0,
  ...extra,
});

/** Lines 1–8; 4 and 6 are malformed; 3 repeats 1 (an exact-cache hit once 1 is answered). `tag` keeps runs apart in the shared cache. */
const trafficLines = (tag: string) => [
  JSON.stringify(chat(`${tag} What is the capital of France?`)),
  JSON.stringify({ body: chat("Name three primes."), tenant: "default", headers: { "x-gearbox-route": "cloud" }, timestamp: "2025-06-01T10:00:00Z" }),
  JSON.stringify(chat(`${tag} What is the capital of France?`)),
  '{"model": "gpt-4o-mini", "messages": [',
  JSON.stringify({
    conversations: [
      { from: "human", value: "Hello there" },
      { from: "gpt", value: "Hi!" },
      { from: "human", value: `${tag} Tell me a joke` },
    ],
  }),
  JSON.stringify({ model: "gpt-4o-mini" }),
  JSON.stringify(chat(`${tag} Stream me a story`, { stream: true, stream_options: { include_usage: true } })),
  JSON.stringify(chat(`${tag} Last one`)),
];
const TRAFFIC = trafficLines("resume");
const VALID = [1, 2, 3, 5, 7, 8];

function traffic(name: string, lines: string[] = TRAFFIC): string {
  const file = path.join(dir, name);
  writeFileSync(file, lines.join("\n") + "\n");
  return file;
}

function results(file: string): Record<string, unknown>[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

before(async () => {
  cloud = await startOpenAIUpstream();
  const ports = await freePorts();
  gateway = await startGatewayProcess({
    dir,
    name: "replay",
    mode: "extproc",
    ports,
    yaml: `${listenYaml(ports)}logging: { level: info }
providers:
  - { name: openai, kind: openai, base_url: '${cloud.baseURL}', api_key_env: TEST_PROVIDER_KEY, default: true }
cache:
  exact: { enable: true }
`,
    env: { TEST_PROVIDER_KEY: "sk-test-replay" },
  });
});

after(async () => {
  await gateway?.stop();
  await cloud?.close();
});

const logOf = (id: unknown) => gateway.logs.find((l) => l.msg === "request" && l.request_id === id);

describe("gearbox replay", () => {
  for (const via of ["front door", "ext_proc"] as const) {
    test(`through the ${via}: one line per valid request, as the gateway logged it; malformed lines reported and skipped`, async () => {
      const input = traffic(`traffic-${via.replace(" ", "-")}.jsonl`, trafficLines(via));
      const out = path.join(dir, `out-${via.replace(" ", "-")}.jsonl`);
      const target =
        via === "front door"
          ? ["--target", gateway.url]
          : ["--target", `grpc://${gateway.extProcAddress}`, "--cluster", `openai=${new URL(cloud.baseURL).origin}`];
      // Concurrency 1: line 3 must come after line 1's answer filled the cache.
      const run = await gearbox(["replay", input, ...target, "--out", out, "--concurrency", "1"]);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stderr, /line 4: not JSON/);
      assert.match(run.stderr, /line 6: no 'messages'/);
      assert.match(run.stderr, /6 sent \(0 failed\), 2 malformed line\(s\) skipped/);
      const rows = results(out);
      assert.deepEqual(
        rows.map((r) => r.replay_line),
        VALID,
      );
      // The gateway writes its log asynchronously, in batches (up to 20 ms after the answer left).
      await eventually(() => rows.every((row) => logOf(row.request_id)), "a request log line for every replayed request", 5000).catch(() => undefined);
      for (const row of rows) {
        assert.equal(row.status, 200, JSON.stringify(row));
        assert.equal(row.target, via === "front door" ? "front_door" : "ext_proc");
        const logged = logOf(row.request_id);
        assert.ok(logged, `no request log line for ${String(row.request_id)}`);
        assert.equal(logged.route, row.route);
        assert.equal(logged.transport, via === "front door" ? "front_door" : "ext_proc");
        assert.equal(row.input_tokens, logged.input_tokens, `line ${String(row.replay_line)}`);
        assert.equal(row.output_tokens, logged.output_tokens, `line ${String(row.replay_line)}`);
        if (row.route === "cloud") assert.equal(row.cost_usd, logged.cost_usd);
      }
      const byLine = new Map(rows.map((r) => [r.replay_line, r]));
      assert.equal(byLine.get(1)?.route, "cloud");
      assert.equal(byLine.get(3)?.route, "cache", "the repeat is an exact-cache hit");
      assert.equal(byLine.get(3)?.cache, "hit");
      assert.equal(byLine.get(3)?.cost_usd, 0);
      assert.ok(typeof byLine.get(1)?.cost_usd === "number" && (byLine.get(1)!.cost_usd as number) > 0);
      assert.equal(byLine.get(2)?.tenant, "default");
      assert.equal(byLine.get(7)?.stream, true);
      assert.equal(typeof byLine.get(7)?.ttft_ms, "number");
      assert.ok((byLine.get(7)?.output_tokens as number) > 0, "usage read from the stream");
      // The ShareGPT line went as the turns up to the last human one.
      const shareGpt = cloud.requests.find((r) => r.body.toString().includes(`${via} Tell me a joke`));
      assert.ok(shareGpt, "the ShareGPT line reached the cloud");
      assert.deepEqual(
        (shareGpt.json as { messages: { role: string }[] }).messages.map((m) => m.role),
        ["user", "assistant", "user"],
      );
    });
  }

  test("--limit, then --resume sends only what is left, once", async () => {
    const input = traffic("traffic-resume.jsonl");
    const out = path.join(dir, "out-resume.jsonl");
    const first = await gearbox(["replay", input, "--target", gateway.url, "--out", out, "--limit", "2", "--concurrency", "1"]);
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(
      results(out).map((r) => r.replay_line),
      [1, 2],
    );
    const again = await gearbox(["replay", input, "--target", gateway.url, "--out", out]);
    assert.equal(again.code, 2, "an existing output without --resume is refused");
    assert.match(again.stderr, /already holds results: --resume/);
    const resumed = await gearbox(["replay", input, "--target", gateway.url, "--out", out, "--resume"]);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, /4 sent .*2 already done/);
    assert.deepEqual(
      results(out)
        .map((r) => r.replay_line as number)
        .sort((a, b) => a - b),
      VALID,
    );
  });

  test("SIGINT stops sending, keeps the finished lines (exit 130); --resume completes the run", async () => {
    const lines = Array.from({ length: 40 }, (_, i) => JSON.stringify(chat(`question number ${i}`)));
    const input = traffic("traffic-sigint.jsonl", lines);
    const out = path.join(dir, "out-sigint.jsonl");
    let signalled = false;
    const run = await gearbox(["replay", input, "--target", gateway.url, "--out", out, "--rate", "4", "--concurrency", "2"], (_text, child) => {
      // Once a few requests are done (the plain progress line says so), interrupt.
      if (!signalled && readFileSafe(out).split("\n").length > 3) {
        signalled = true;
        child.kill("SIGINT");
      }
    });
    assert.ok(signalled, "the replay ended before it could be interrupted");
    assert.equal(run.code, 130, run.stderr);
    assert.match(run.stderr, /SIGINT, waiting for the requests in flight/);
    const kept = results(out);
    assert.ok(kept.length >= 3 && kept.length < 40, String(kept.length));
    assert.ok(kept.every((r) => r.status === 200));
    const resumed = await gearbox(["replay", input, "--target", gateway.url, "--out", out, "--resume", "--concurrency", "8"]);
    assert.equal(resumed.code, 0, resumed.stderr);
    const all = results(out).map((r) => r.replay_line as number);
    assert.equal(all.length, 40);
    assert.equal(new Set(all).size, 40);
  });

  test("--shadow over ext_proc: Gearbox records its decision (observability mode) and changes nothing", async () => {
    const input = traffic("traffic-shadow.jsonl", [JSON.stringify(chat("shadowed question one")), JSON.stringify(chat("shadowed question two"))]);
    const out = path.join(dir, "out-shadow.jsonl");
    const before = gateway.logs.length;
    const run = await gearbox(["replay", input, "--target", `grpc://${gateway.extProcAddress}`, "--shadow", "--out", out]);
    assert.equal(run.code, 0, run.stderr);
    const rows = results(out);
    assert.equal(rows.length, 2);
    assert.ok(rows.every((r) => r.shadow === true && r.status === 0 && r.error === undefined));
    const shadowedLines = () => gateway.logs.slice(before).filter((l) => l.msg === "request" && l.shadow === true);
    const shadowed = await eventually(() => shadowedLines().length >= 2 && shadowedLines(), "two shadowed request log lines", 5000).catch(() =>
      shadowedLines(),
    );
    assert.equal(shadowed.length, 2, JSON.stringify(gateway.logs.slice(before)));
    assert.ok(shadowed.every((l) => l.shadow_route === "cloud"));
  });

  test("usage errors exit 2 with one line naming the problem", async () => {
    const input = traffic("traffic-usage.jsonl");
    for (const [args, message] of [
      [["replay", input], /--target is required/],
      [["replay", input, "--target", gateway.url, "--shadow"], /--shadow needs an ext_proc target/],
      [["replay", input, "--target", gateway.url, "--rate", "fast"], /--rate 'fast' is not a positive number/],
      [["replay", input, "--target", "nowhere"], /neither an http\(s\) URL nor grpc:\/\/host:port/],
    ] as const) {
      const run = await gearbox([...args]);
      assert.equal(run.code, 2, `${args.join(" ")}: ${run.stderr}`);
      assert.match(run.stderr.split("\n")[0] ?? "", message);
    }
    const missing = await gearbox(["replay", path.join(dir, "absent.jsonl"), "--target", gateway.url]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /absent\.jsonl does not exist/);
  });
});

function readFileSafe(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}
