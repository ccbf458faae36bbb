/**
 * Every recorded (or documented) provider answer in `test/fixtures/`, translated for an OpenAI
 * client and parsed by the official `openai` SDK: a non-streamed body with `create()`, a stream
 * with the SDK's `chat.completions.stream()` helper, which rebuilds the completion from the
 * chunks and rejects malformed ones. Each must come out as a valid completion or as a clean
 * OpenAI `APIError` — never a parse failure, garbage or a hang.
 */
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import { openaiChatEndpoint } from "../../extproc/endpoints/openai-chat.ts";
import type { Provider } from "../../extproc/providers/provider.ts";
import { anthropicSseEvents } from "../emulators/anthropic-upstream.ts";
import { FIXTURES_DIR, loadChunkLines, readFixtureBytes } from "../emulators/fixtures.ts";
import { geminiStreamBytes } from "../emulators/gemini-upstream.ts";
import { readNdjsonFixture } from "../emulators/ollama-upstream.ts";
import { chunkLinesToSseEvents } from "../emulators/sse.ts";
import { testConfig } from "../support/gateway.ts";

interface Served {
  status: number;
  contentType: string;
  body: Buffer;
}

interface Sweep {
  kind: "openai" | "anthropic" | "gemini" | "ollama";
  folder: string;
  json: (file: string) => boolean;
  stream: (file: string) => boolean;
  streamBytes: (name: string) => Buffer;
}

const SWEEPS: Sweep[] = [
  ...["openai", "deepseek", "groq", "mistral", "xai", "openai-compatible"].map((p): Sweep => ({
    kind: "openai",
    folder: `vercel-ai/${p}`,
    json: (f) => f.endsWith(".json") && !f.includes("transcription"),
    stream: (f) => f.endsWith(".chunks.txt"),
    streamBytes: (name) => Buffer.from(chunkLinesToSseEvents(loadChunkLines(name)).join("")),
  })),
  {
    kind: "anthropic",
    folder: "vercel-ai/anthropic",
    json: (f) => f.endsWith(".json"),
    stream: (f) => f.endsWith(".chunks.txt"),
    streamBytes: (name) => Buffer.from(anthropicSseEvents(loadChunkLines(name)).join("")),
  },
  { kind: "gemini", folder: "vercel-ai/google", json: (f) => f.endsWith(".json"), stream: (f) => f.endsWith(".chunks.txt"), streamBytes: geminiStreamBytes },
  {
    kind: "gemini",
    folder: "firebase-gemini/googleai",
    json: (f) => f.endsWith(".json"),
    stream: (f) => f.startsWith("streaming-") && f.endsWith(".txt"),
    streamBytes: geminiStreamBytes,
  },
  {
    kind: "ollama",
    folder: "ollama",
    json: (f) => f.startsWith("chat") && f.endsWith(".json"),
    stream: (f) => f.endsWith(".ndjson"),
    streamBytes: readNdjsonFixture,
  },
];

const config = testConfig(`providers:
  - { name: openai, kind: openai, base_url: 'http://127.0.0.1:1/v1' }
  - { name: anthropic, kind: anthropic, base_url: 'http://127.0.0.1:1/v1' }
  - { name: gemini, kind: gemini, base_url: 'http://127.0.0.1:1/v1beta' }
  - { name: ollama, kind: ollama, base_url: 'http://127.0.0.1:1' }
`);
const providerFor = (kind: Sweep["kind"]): Provider => config.providers.find((p) => p.name === kind) as Provider;

/** The HTTP status a recorded JSON body was served with: errors carry it, the rest were 200. */
function recordedStatus(body: Buffer): number {
  try {
    const json = JSON.parse(body.toString("utf8")) as { error?: { code?: unknown }; type?: unknown };
    if (json.error && typeof json.error.code === "number") return json.error.code;
    if (json.error || json.type === "error") return 400;
  } catch {
    return 200;
  }
  return 200;
}

function translate(kind: Sweep["kind"], stream: boolean, upstream: Buffer): Served {
  const parsed = openaiChatEndpoint.parse({
    model: "m",
    messages: [{ role: "user", content: "hi" }],
    stream,
    stream_options: stream ? { include_usage: true } : undefined,
  });
  assert.ok(parsed.ok);
  const plan = parsed.value.plan(providerFor(kind), { upstreamModel: "m", forceStreamUsage: true });
  if (!stream) {
    const status = recordedStatus(upstream);
    const out = plan.response(status, { "content-type": "application/json" }, upstream);
    return { status: out.status ?? status, contentType: "application/json", body: out.body ?? upstream };
  }
  const translator = plan.stream(200, {});
  const parts: Buffer[] = [];
  // Feed the recording in 97-byte slices: events straddle slices, as on a real connection.
  for (let i = 0; i < upstream.length; i += 97) parts.push(translator.push(upstream.subarray(i, i + 97)).body ?? upstream.subarray(i, i + 97));
  parts.push(translator.end().body ?? Buffer.alloc(0));
  return { status: 200, contentType: "text/event-stream", body: Buffer.concat(parts) };
}

let served: Served = { status: 200, contentType: "application/json", body: Buffer.from("{}") };
let server: http.Server;
let client: OpenAI;

before(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(served.status, { "content-type": served.contentType });
      res.end(served.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  client = new OpenAI({ baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, apiKey: "k", maxRetries: 0, timeout: 10_000 });
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const FINISH = new Set(["stop", "length", "tool_calls", "content_filter", "function_call"]);

for (const sweep of SWEEPS) {
  describe(`${sweep.folder} → OpenAI client`, () => {
    const files = readdirSync(`${FIXTURES_DIR}${sweep.folder}`).sort();
    for (const file of files.filter(sweep.json)) {
      const name = `${sweep.folder}/${file.replace(/\.json$/, "")}`;
      test(`${file}: create() parses it`, async () => {
        served = translate(sweep.kind, false, readFixtureBytes(name, "json"));
        try {
          const res = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] });
          assert.equal(res.object, "chat.completion");
          assert.ok(res.choices.length >= 1);
          for (const c of res.choices) {
            assert.equal(c.message.role, "assistant");
            assert.ok(c.finish_reason === null || FINISH.has(c.finish_reason), `finish ${String(c.finish_reason)}`);
            for (const call of c.message.tool_calls ?? [])
              if (call.type === "function") assert.doesNotThrow(() => JSON.parse(call.function.arguments) as unknown);
          }
        } catch (err) {
          assert.ok(err instanceof OpenAI.APIError, `not a clean OpenAI error: ${String(err)}`);
          assert.ok(err.status !== undefined && err.status >= 400);
        }
      });
    }
    for (const file of files.filter(sweep.stream)) {
      const name = `${sweep.folder}/${file.replace(/\.(chunks\.txt|txt|ndjson)$/, "")}`;
      test(`${file}: the SDK's stream helper rebuilds it`, async () => {
        served = translate(sweep.kind, true, sweep.streamBytes(name));
        try {
          const final = await client.chat.completions
            .stream({ model: "m", messages: [{ role: "user", content: "hi" }], stream_options: { include_usage: true } })
            .finalChatCompletion();
          assert.ok(final.choices.length >= 1);
          for (const c of final.choices)
            for (const call of c.message.tool_calls ?? [])
              if (call.type === "function") assert.doesNotThrow(() => JSON.parse(call.function.arguments) as unknown);
        } catch (err) {
          assert.ok(err instanceof OpenAI.APIError, `not a clean OpenAI error: ${String(err)}`);
        }
      });
    }
  });
}
