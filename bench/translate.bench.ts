/**
 * Translation cost, in-process, per request and per streamed chunk, for each translator
 * direction, with a baseline in the same run: JSON.parse + JSON.stringify of the same bytes
 * (the least any JSON-touching gateway does). Usage: npm run bench:translate
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { openaiChatEndpoint } from "../extproc/endpoints/openai-chat.ts";
import { anthropicMessagesEndpoint } from "../extproc/endpoints/anthropic-messages.ts";
import type { EndpointSpec } from "../extproc/endpoints/spec.ts";
import { testConfig } from "../test/support/gateway.ts";

const fixture = (name: string) => readFileSync(fileURLToPath(new URL(`../test/fixtures/${name}`, import.meta.url)));
const sse = (lines: string[], framing: "openai" | "anthropic" | "gemini") =>
  lines.map((l) =>
    Buffer.from(
      framing === "anthropic"
        ? `event: ${(JSON.parse(l) as { type: string }).type}\ndata: ${l}\n\n`
        : framing === "gemini"
          ? `data: ${l}\r\n\r\n`
          : `data: ${l}\n\n`,
    ),
  );
const lines = (name: string) =>
  fixture(name)
    .toString("utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");

const config = testConfig(`providers:
  - { name: openai, kind: openai, base_url: 'http://127.0.0.1:1/v1' }
  - { name: anthropic, kind: anthropic, base_url: 'http://127.0.0.1:1/v1', models: [claude-haiku-4-5] }
  - { name: gemini, kind: gemini, base_url: 'http://127.0.0.1:1/v1beta', models: [gemini-2.5-flash] }
  - { name: ollama, kind: ollama, base_url: 'http://127.0.0.1:1', models: [llama3.2] }
`);
const provider = (name: string) => {
  const p = config.providers.find((x) => x.name === name);
  if (!p) throw new Error(name);
  return p;
};

const openaiRequest = (model: string, stream: boolean) =>
  Buffer.from(
    JSON.stringify({
      model,
      stream,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Summarize the plot of Hamlet in three sentences, please." },
      ],
      temperature: 0.3,
      max_tokens: 256,
    }),
  );
const ollamaStreamLine = lines("ollama/chat-stream.ndjson")[0] ?? "";

interface Direction {
  name: string;
  endpoint: EndpointSpec;
  provider: string;
  model: string;
  request: (stream: boolean) => Buffer;
  response: Buffer;
  stream: Buffer[];
}

const DIRECTIONS: Direction[] = [
  {
    name: "openai → openai (pass-through)",
    endpoint: openaiChatEndpoint,
    provider: "openai",
    model: "gpt-4.1-nano",
    request: (s) => openaiRequest("gpt-4.1-nano", s),
    response: fixture("vercel-ai/openai/openai-text.json"),
    stream: sse(lines("vercel-ai/openai/openai-text.chunks.txt"), "openai"),
  },
  {
    name: "openai → anthropic",
    endpoint: openaiChatEndpoint,
    provider: "anthropic",
    model: "claude-haiku-4-5",
    request: (s) => openaiRequest("claude-haiku-4-5", s),
    response: fixture("vercel-ai/anthropic/anthropic-text.json"),
    stream: sse(lines("vercel-ai/anthropic/anthropic-text.chunks.txt"), "anthropic"),
  },
  {
    name: "openai → gemini",
    endpoint: openaiChatEndpoint,
    provider: "gemini",
    model: "gemini-2.5-flash",
    request: (s) => openaiRequest("gemini-2.5-flash", s),
    response: fixture("vercel-ai/google/google-text.json"),
    stream: sse(lines("vercel-ai/google/google-text.chunks.txt"), "gemini"),
  },
  {
    name: "openai → ollama",
    endpoint: openaiChatEndpoint,
    provider: "ollama",
    model: "llama3.2",
    request: (s) => openaiRequest("llama3.2", s),
    response: fixture("ollama/chat.json"),
    // The documented stream has two lines; repeat its first line to a realistic length.
    stream: [...Array.from({ length: 100 }, () => Buffer.from(`${ollamaStreamLine}\n`)), Buffer.from(`${lines("ollama/chat-stream.ndjson")[1] ?? ""}\n`)],
  },
  {
    name: "anthropic client → openai",
    endpoint: anthropicMessagesEndpoint,
    provider: "openai",
    model: "gpt-4.1-nano",
    request: (s) =>
      Buffer.from(
        JSON.stringify({
          model: "gpt-4.1-nano",
          stream: s,
          max_tokens: 256,
          system: "Be brief.",
          messages: [{ role: "user", content: "Summarize the plot of Hamlet in three sentences, please." }],
        }),
      ),
    response: fixture("vercel-ai/openai/openai-text.json"),
    stream: sse(lines("vercel-ai/openai/openai-text.chunks.txt"), "openai"),
  },
];

function timeUs(iterations: number, fn: () => void): number {
  for (let i = 0; i < Math.min(iterations, 500); i++) fn();
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) fn();
  return Number(process.hrtime.bigint() - start) / 1e3 / iterations;
}

function plan(d: Direction, stream: boolean) {
  const parsed = d.endpoint.parse(JSON.parse(d.request(stream).toString("utf8")));
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return parsed.value.plan(provider(d.provider), { upstreamModel: d.model, forceStreamUsage: true });
}

const N = Number(process.argv[2] ?? 5000);
console.log(`# translation cost — ${new Date().toISOString()} — node ${process.version}, ${N} iterations each\n`);
console.log("| direction | request µs | baseline µs | response µs | baseline µs | stream µs/chunk | baseline µs/chunk | chunks |");
console.log("|---|---:|---:|---:|---:|---:|---:|---:|");
function measure(d: Direction, N: number): string {
  const body = d.request(false);
  const request = timeUs(N, () => plan(d, false));
  const requestBase = timeUs(N, () => JSON.stringify(JSON.parse(body.toString("utf8"))));
  const p = plan(d, false);
  const response = timeUs(N, () => p.response(200, { "content-type": "application/json" }, d.response));
  const responseBase = timeUs(N, () => JSON.stringify(JSON.parse(d.response.toString("utf8"))));
  const streamPlan = plan(d, true);
  const rounds = Math.max(10, Math.round(N / 50));
  const perStream = timeUs(rounds, () => {
    const t = streamPlan.stream(200, {});
    for (const c of d.stream) t.push(c);
    t.end();
  });
  const streamBase = timeUs(rounds, () => {
    for (const c of d.stream) {
      const text = c.toString("utf8");
      const data = text.slice(text.indexOf("{"), text.lastIndexOf("}") + 1);
      JSON.stringify(JSON.parse(data));
    }
  });
  const n = d.stream.length;
  return `| ${d.name} | ${request.toFixed(1)} | ${requestBase.toFixed(1)} | ${response.toFixed(1)} | ${responseBase.toFixed(1)} | ${(perStream / n).toFixed(2)} | ${(streamBase / n).toFixed(2)} | ${n} |`;
}

// One unprinted pass first, so no row pays for the JIT warming up on another's behalf.
for (const d of DIRECTIONS) measure(d, Math.max(100, Math.round(N / 10)));
for (const d of DIRECTIONS) console.log(measure(d, N));
