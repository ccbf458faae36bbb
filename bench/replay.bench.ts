/**
 * `gearbox replay` throughput (npm run bench:replay): 20,000 chat requests from a temp traffic
 * file to a trivial local HTTP server that answers at once like the front door (JSON completion
 * with usage and the x-gearbox-* headers), 64 in flight. Goal: ≥ 2,000 req/s, so that replay is
 * never the bottleneck of a load test.
 */
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { replay, parseReplayArgs } from "../cli/replay/main.ts";

const REQUESTS = Number(process.env.BENCH_REPLAY_REQUESTS ?? 20_000);
const ANSWER = Buffer.from(
  JSON.stringify({
    id: "c",
    object: "chat.completion",
    model: "gpt-4o-mini",
    choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
    usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
  }),
);

async function main(): Promise<void> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, {
        "content-type": "application/json",
        "content-length": ANSWER.length,
        "x-gearbox-route": "cloud",
        "x-gearbox-reason": "default_provider:openai",
        "x-gearbox-request-id": "r",
      });
      res.end(ANSWER);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  const dir = mkdtempSync(path.join(tmpdir(), "gearbox-bench-replay-"));
  try {
    const file = path.join(dir, "traffic.jsonl");
    const line = (i: number) => JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: `question ${i}` }] });
    writeFileSync(file, Array.from({ length: REQUESTS }, (_, i) => line(i)).join("\n") + "\n");
    const options = parseReplayArgs([file, "--target", `http://127.0.0.1:${port}`, "--concurrency", "64", "--out", path.join(dir, "out.jsonl")]);
    const started = performance.now();
    const summary = await replay(options);
    const seconds = (performance.now() - started) / 1000;
    const written = readFileSync(options.out, "utf8").split("\n").filter(Boolean).length;
    if (summary.sent !== REQUESTS || written !== REQUESTS || summary.failed !== 0)
      throw new Error(`sent ${summary.sent}, written ${written}, failed ${summary.failed}`);
    console.log(
      `gearbox replay: ${REQUESTS.toLocaleString("en")} requests in ${seconds.toFixed(2)} s = ${(REQUESTS / seconds).toFixed(0)} req/s to a trivial local HTTP server, 64 in flight (goal ≥ 2,000 req/s)`,
    );
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
