/**
 * The baselines of the CPU bench, one per process (started by `cpu.bench.ts` through `roles.ts`):
 *
 * - `recordedUpstream`: an OpenAI upstream that answers every chat call with the recorded
 *   `openai-text` exchange (test/fixtures/vercel-ai/openai) — the JSON completion, or for
 *   `"stream": true` the recording's first 18 content chunks plus its finish and usage chunks and
 *   `[DONE]`: 20 chunks, as in issue 25's measurement. No pacing, no request recording. The first
 *   event's `id` carries the moment the request was read (`process.hrtime`, the system's monotonic
 *   clock, the same in every process): the client splits its first byte into the way there and
 *   the way back (`stampOf`).
 * - `bareProxy`: the cheapest proxy that can stand where Gearbox stands: Node's HTTP server piping
 *   each request to the upstream over a keep-alive agent, nothing parsed.
 */
import http from "node:http";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const FIXTURE = fileURLToPath(new URL("../../test/fixtures/vercel-ai/openai/openai-text", import.meta.url));

/** The recorded stream cut to 20 chunks: 18 content deltas, then the recording's last two (finish, usage). */
export function recordedStream(): Buffer {
  const lines = readFileSync(`${FIXTURE}.chunks.txt`, "utf8").split("\n").filter(Boolean);
  const chunks = [...lines.slice(0, 18), ...lines.slice(-2)];
  return Buffer.from(chunks.map((c) => `data: ${c}\n\n`).join("") + "data: [DONE]\n\n");
}

function listen(server: http.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)));
}

const STAMP = /"id":"t(\d+)"/;

/** The monotonic nanoseconds the upstream stamped into a stream's first event, if `text` holds them. */
export function stampOf(text: string): bigint | undefined {
  const m = STAMP.exec(text);
  return m ? BigInt(m[1] as string) : undefined;
}

export async function recordedUpstream(): Promise<number> {
  const json = readFileSync(`${FIXTURE}.json`);
  const [first = "", ...events] = recordedStream()
    .toString("utf8")
    .split(/(?<=\n\n)/);
  const idAt = first.indexOf('"id":"');
  if (idAt < 0) throw new Error(`the recorded stream's first event has no "id" to carry the read stamp: ${first.slice(0, 80)}`);
  const head = first.slice(0, idAt + '"id":"'.length);
  const tail = first.slice(first.indexOf('"', head.length));
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      const read = process.hrtime.bigint();
      const stream = Buffer.concat(parts).includes('"stream":true');
      if (!stream) {
        res.writeHead(200, { "content-type": "application/json", "content-length": json.length });
        res.end(json);
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      // One write per chunk, as a provider flushes each token event.
      res.write(`${head}t${read}${tail}`);
      for (const event of events) res.write(event);
      res.end();
    });
  });
  server.keepAliveTimeout = 60_000;
  return listen(server);
}

/**
 * A keep-alive server that answers every request, once its body is read, with a chat completion
 * whose content is `words` times "hello " (the client benches' upstream); resolves with its port.
 */
export async function helloServer(words: number): Promise<{ server: http.Server; port: number }> {
  const answer = Buffer.from(
    JSON.stringify({
      id: "x",
      choices: [{ message: { role: "assistant", content: "hello ".repeat(words) } }],
      usage: { prompt_tokens: 10, completion_tokens: 20 },
    }),
  );
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json", "content-length": answer.length });
      res.end(answer);
    });
  });
  server.keepAliveTimeout = 60_000;
  return { server, port: await listen(server) };
}

/** A POST to `helloServer`'s chat completions path on `port`, through `agent` (the client benches' call). */
export function helloRequest(port: number, agent: http.Agent, headers: http.OutgoingHttpHeaders, signal?: AbortSignal): http.ClientRequest {
  return http.request({ hostname: "127.0.0.1", port, path: "/v1/chat/completions", method: "POST", agent, headers, ...(signal && { signal }) });
}

export async function bareProxy(upstream: string): Promise<number> {
  const target = new URL(upstream);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const server = http.createServer((req, res) => {
    const out = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host }, agent },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on("error", () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(out);
  });
  server.keepAliveTimeout = 60_000;
  return listen(server);
}
