/**
 * One case per backend protocol: how to start its emulator (replaying recorded or documented
 * traffic), the provider config that points Gearbox at it, and what a client must end up with
 * for each replayed fixture — read straight from the fixture, not from Gearbox's own decoders.
 */
import { startAnthropicUpstream } from "../emulators/anthropic-upstream.ts";
import { loadChunkFixture, loadJsonFixture } from "../emulators/fixtures.ts";
import { startGeminiUpstream } from "../emulators/gemini-upstream.ts";
import { ndjsonFixtureLines, startOllamaUpstream } from "../emulators/ollama-upstream.ts";
import { startOpenAIUpstream } from "../emulators/openai-upstream.ts";

export const PROVIDER_KEY = "sk-provider-secret-7f3a";

export interface ToolCallFacts {
  name: string;
  args: unknown;
}

export interface RunningBackend {
  /** The `providers:` entry for Gearbox (key from env `TEST_PROVIDER_KEY`). */
  providerYaml: string;
  /** The provider's name (Envoy cluster) and the emulator's origin (cluster endpoint). */
  providerName: string;
  origin: string;
  /** Queues a text answer; returns the text the client must receive. */
  queueText(stream: boolean): string;
  /** Queues a tool-call answer; returns the call the client must receive. */
  queueToolCall(stream: boolean): ToolCallFacts;
  /** Every header value of every request the upstream received. */
  receivedHeaderValues(): string[];
  close(): Promise<void>;
}

export interface BackendCase {
  name: string;
  model: string;
  start(): Promise<RunningBackend>;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === "object" && v !== null ? (v as Json) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const text = (v: unknown): string => (typeof v === "string" ? v : "");
const headerValues = (requests: { headers: Record<string, string | string[] | undefined> }[]) =>
  requests.flatMap((r) => Object.values(r.headers).flatMap((v) => (v === undefined ? [] : Array.isArray(v) ? v : [v])));

function openAIText(name: string, stream: boolean): string {
  if (!stream) return String(obj(obj(arr(obj(loadJsonFixture(name)).choices)[0]).message).content);
  return loadChunkFixture(name)
    .map((c) => text(obj(obj(arr(obj(c).choices)[0]).delta).content))
    .join("");
}

function openAITool(name: string, stream: boolean): ToolCallFacts {
  if (!stream) {
    const fn = obj(obj(arr(obj(obj(arr(obj(loadJsonFixture(name)).choices)[0]).message).tool_calls)[0]).function);
    return { name: String(fn.name), args: JSON.parse(String(fn.arguments)) };
  }
  let fnName = "";
  let args = "";
  for (const c of loadChunkFixture(name)) {
    const fn = obj(obj(arr(obj(obj(arr(obj(c).choices)[0]).delta).tool_calls)[0]).function);
    if (typeof fn.name === "string" && fn.name) fnName = fn.name;
    if (typeof fn.arguments === "string") args += fn.arguments;
  }
  return { name: fnName, args: JSON.parse(args) };
}

export const BACKENDS: BackendCase[] = [
  {
    name: "openai-compatible (DeepSeek preset)",
    model: "deepseek-chat",
    async start() {
      const up = await startOpenAIUpstream({ apiKey: PROVIDER_KEY });
      return {
        providerName: "deepseek",
        origin: up.url,
        providerYaml: `  - { name: deepseek, preset: deepseek, base_url: '${up.baseURL}', api_key_env: TEST_PROVIDER_KEY, default: true }\n`,
        queueText(stream) {
          const fixture = stream ? "vercel-ai/mistral/mistral-text" : "vercel-ai/deepseek/deepseek-text";
          up.queue({ fixture, pacing: { splitEvents: true } });
          return openAIText(fixture, stream);
        },
        queueToolCall(stream) {
          up.queue({ fixture: "vercel-ai/deepseek/deepseek-tool-call", pacing: { splitEvents: true } });
          return openAITool("vercel-ai/deepseek/deepseek-tool-call", stream);
        },
        receivedHeaderValues: () => headerValues(up.requests),
        close: () => up.close(),
      };
    },
  },
  {
    name: "anthropic",
    model: "claude-haiku-4-5",
    async start() {
      const up = await startAnthropicUpstream({ apiKey: PROVIDER_KEY });
      return {
        providerName: "anthropic",
        origin: up.url,
        providerYaml: `  - { name: anthropic, kind: anthropic, base_url: '${up.baseURL}', api_key_env: TEST_PROVIDER_KEY, default: true }\n`,
        queueText(stream) {
          const fixture = "vercel-ai/anthropic/anthropic-text";
          up.queue({ fixture, pacing: { splitEvents: true } });
          if (!stream)
            return arr(obj(loadJsonFixture(fixture)).content)
              .map((b) => (obj(b).type === "text" ? String(obj(b).text) : ""))
              .join("");
          return loadChunkFixture(fixture)
            .map((e) => (obj(obj(e).delta).type === "text_delta" ? String(obj(obj(e).delta).text) : ""))
            .join("");
        },
        queueToolCall(stream) {
          const fixture = "vercel-ai/anthropic/anthropic-json-tool.1";
          up.queue({ fixture, pacing: { splitEvents: true } });
          if (!stream) {
            const block = obj(arr(obj(loadJsonFixture(fixture)).content).find((b) => obj(b).type === "tool_use"));
            return { name: String(block.name), args: block.input };
          }
          const events = loadChunkFixture(fixture).map(obj);
          const start = obj(events.find((e) => e.type === "content_block_start" && obj(e.content_block).type === "tool_use")?.content_block);
          const json = events.map((e) => (obj(e.delta).type === "input_json_delta" ? String(obj(e.delta).partial_json) : "")).join("");
          return { name: String(start.name), args: JSON.parse(json) };
        },
        receivedHeaderValues: () => headerValues(up.requests),
        close: () => up.close(),
      };
    },
  },
  {
    name: "gemini",
    model: "gemini-2.5-flash",
    async start() {
      const up = await startGeminiUpstream({ apiKey: PROVIDER_KEY });
      const parts = (response: unknown) => arr(obj(obj(arr(obj(response).candidates)[0]).content).parts).map(obj);
      return {
        providerName: "gemini",
        origin: up.url,
        providerYaml: `  - { name: gemini, kind: gemini, base_url: '${up.baseURL}', api_key_env: TEST_PROVIDER_KEY, default: true }\n`,
        queueText(stream) {
          const fixture = "vercel-ai/google/google-text";
          up.queue({ fixture, pacing: { splitEvents: true } });
          const responses = stream ? loadChunkFixture(fixture) : [loadJsonFixture(fixture)];
          return responses
            .flatMap(parts)
            .map((p) => (typeof p.text === "string" && p.thought !== true ? p.text : ""))
            .join("");
        },
        queueToolCall(stream) {
          const fixture = "vercel-ai/google/google-tool-call";
          up.queue({ fixture, pacing: { splitEvents: true } });
          const responses = stream ? loadChunkFixture(fixture) : [loadJsonFixture(fixture)];
          const call = obj(responses.flatMap(parts).find((p) => p.functionCall)?.functionCall);
          return { name: String(call.name), args: call.args };
        },
        receivedHeaderValues: () => headerValues(up.requests),
        close: () => up.close(),
      };
    },
  },
  {
    name: "ollama",
    model: "llama3.2",
    async start() {
      const up = await startOllamaUpstream();
      return {
        providerName: "ollama",
        origin: up.url,
        providerYaml: `  - { name: ollama, kind: ollama, base_url: '${up.url}', default: true }\n`,
        queueText(stream) {
          const fixture = stream ? "ollama/chat-stream" : "ollama/chat";
          up.queue({ fixture, pacing: { splitEvents: true } });
          const lines = stream ? ndjsonFixtureLines(fixture).map((l) => JSON.parse(l) as unknown) : [loadJsonFixture(fixture)];
          return lines.map((l) => text(obj(obj(l).message).content)).join("");
        },
        queueToolCall(stream) {
          const fixture = stream ? "ollama/chat-tool-call-stream" : "ollama/chat-tool-call";
          up.queue({ fixture, pacing: { splitEvents: true } });
          const lines = stream ? ndjsonFixtureLines(fixture).map((l) => JSON.parse(l) as unknown) : [loadJsonFixture(fixture)];
          const fn = obj(obj(lines.flatMap((l) => arr(obj(obj(l).message).tool_calls))[0]).function);
          return { name: String(fn.name), args: fn.arguments };
        },
        receivedHeaderValues: () => headerValues(up.requests),
        close: () => up.close(),
      };
    },
  },
];
