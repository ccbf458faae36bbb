/**
 * The replay of every runnable recorded exchange in `test/fixtures/` (issue 21's measure): an
 * official SDK (`openai` on Chat Completions and on the Responses API, `@anthropic-ai/sdk`,
 * `@google/genai` on generateContent) sends the request that produced the recording, a
 * provider emulator replays the recorded answer, and what the SDK parses is compared with what
 * the recording holds — through the front door and through the Envoy harness.
 *
 * Exchanges, per recorded answer (`.json` non-streamed, `.chunks.txt` streamed):
 * - Anthropic client → Anthropic backend, every Anthropic recording: the request is rebuilt from
 *   the answer (the server tools, custom tools and MCP servers it used; a `.2` step carries the
 *   `.1` answer as history, server-tool blocks included) with an `anthropic-beta` header. Passes
 *   when the provider got the client's body and `anthropic-beta`/`anthropic-version`, and the
 *   client got the recorded answer: the SDK's parsed message equals the `.json`; a stream's bytes
 *   equal the recorded events.
 * - Anthropic, OpenAI, Responses and Gemini clients → OpenAI-compatible, Gemini, (all but the
 *   Anthropic client) Anthropic backends; the Responses and Gemini clients run the OpenAI client's exchanges:
 *   each recording's text and tool-call names, as read from the fixture, must be what the SDK
 *   parsed (`create()`; streams through the SDKs' stream helpers).
 * Not runnable, and so not counted: error bodies (their statuses are not recorded; the error
 * suites cover them), transcriptions and legacy completions (no such endpoint), recordings with
 * several streams back to back or a deliberately broken stream (`spliced-`, `duplicate-`), and,
 * for OpenAI clients, Anthropic answers to server tools (no Chat Completions request offers one),
 * and Gemini answers to Gemini's own tools (code execution, grounding, URL context) for both.
 *
 * `GEARBOX_REPLAY_REPORT=1` prints each failure. The pass rates go to bench/RESULTS.md.
 */
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI, Type } from "@google/genai";
import OpenAI from "openai";
import { startEnvoy } from "../harness/envoy.ts";
import { anthropicSseEvents, startAnthropicUpstream, type AnthropicUpstream } from "../emulators/anthropic-upstream.ts";
import { FIXTURES_DIR, hasFixture, loadChunkFixture, loadChunkLines, loadJsonFixture } from "../emulators/fixtures.ts";
import { geminiStreamBytes, startGeminiUpstream, type GeminiUpstream } from "../emulators/gemini-upstream.ts";
import { startOpenAIUpstream, type OpenAIUpstream } from "../emulators/openai-upstream.ts";
import { shippedEnvoySettings } from "../support/envoy-settings.ts";
import { startTestGateway, testConfig, type TestGateway } from "../support/gateway.ts";

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string => (typeof v === "string" ? v : "");

const MODELS = { anthropic: "claude-replay", openai: "gpt-replay", gemini: "gemini-2.5-flash" } as const;
const BETA = "code-execution-2025-08-25,web-fetch-2025-09-10";
type Backend = keyof typeof MODELS;

/** What a client must end up with, read from the recording. */
interface Expected {
  text: string;
  tools: string[];
}

/** The client SDK and API: `responses` is the openai SDK's Responses API, `gemini` is @google/genai. */
type Client = "anthropic" | "openai" | "responses" | "gemini";
const CLIENTS: readonly Client[] = ["anthropic", "openai", "responses", "gemini"];

interface Exchange {
  name: string;
  client: Client;
  backend: Backend;
  fixture: string;
  stream: boolean;
}

const names = (folder: string, keep: (f: string) => boolean) =>
  readdirSync(`${FIXTURES_DIR}${folder}`)
    .filter(keep)
    .map((f) => ({ fixture: `${folder}/${f.replace(/\.(json|chunks\.txt|txt)$/, "")}`, stream: !f.endsWith(".json") }));

const isError = (fixture: string) => !fixture.includes("/firebase-gemini/") && !!obj(hasFixture(fixture, "json") ? loadJsonFixture(fixture) : {}).error;
const OPENAI_FAMILY = ["openai", "deepseek", "groq", "mistral", "xai", "openai-compatible"]
  .flatMap((p) => names(`vercel-ai/${p}`, (f) => (f.endsWith(".json") || f.endsWith(".chunks.txt")) && !/transcription|completion-text|error/.test(f)))
  .filter((e) => !(e.stream ? false : isError(e.fixture)));
const ANTHROPIC = names("vercel-ai/anthropic", (f) => (f.endsWith(".json") || f.endsWith(".chunks.txt")) && !/^(spliced|duplicate)-|\.error\./.test(f));
/** Answers to Gemini's own tools (code execution, Google Search / Maps grounding, URL context): no OpenAI or Anthropic request offers them. */
const GEMINI_SERVER_TOOLS = /code-execution|grounding|url-context/;
const GEMINI = [
  ...names("vercel-ai/google", (f) => (f.endsWith(".json") || f.endsWith(".chunks.txt")) && !/429|missing-terminal/.test(f)),
  ...names(
    "firebase-gemini/googleai",
    (f) => /^(unary|streaming)-success-/.test(f) && !GEMINI_SERVER_TOOLS.test(f) && (f.startsWith("streaming-") ? f.endsWith(".txt") : f.endsWith(".json")),
  ),
];

/** Blocks an Anthropic answer holds that only a server-tool request can produce. */
const usesServerTools = (content: unknown[]) => content.some((b) => /server_tool_use|mcp_tool_use|_tool_result$/.test(str(obj(b).type)));
const anthropicContent = (e: { fixture: string; stream: boolean }): unknown[] =>
  e.stream ? loadChunkFixture(e.fixture).flatMap((c) => [obj(c).content_block].filter(Boolean)) : arr(obj(loadJsonFixture(e.fixture)).content);
const singleStream = (fixture: string) => loadChunkLines(fixture).filter((l) => l.includes('"message_start"')).length === 1;

export const EXCHANGES: Exchange[] = [
  ...ANTHROPIC.filter((e) => !e.stream || singleStream(e.fixture)).map((e) => ({ ...e, client: "anthropic" as const, backend: "anthropic" as const })),
  ...OPENAI_FAMILY.map((e) => ({ ...e, client: "anthropic" as const, backend: "openai" as const })),
  ...GEMINI.map((e) => ({ ...e, client: "anthropic" as const, backend: "gemini" as const })),
  ...OPENAI_FAMILY.map((e) => ({ ...e, client: "openai" as const, backend: "openai" as const })),
  ...ANTHROPIC.filter((e) => (!e.stream || singleStream(e.fixture)) && !usesServerTools(anthropicContent(e))).map((e) => ({
    ...e,
    client: "openai" as const,
    backend: "anthropic" as const,
  })),
  ...GEMINI.map((e) => ({ ...e, client: "openai" as const, backend: "gemini" as const })),
]
  // The Responses API and Gemini clients replay what the OpenAI client does (no server tools either).
  .flatMap((e): Omit<Exchange, "name">[] => (e.client === "openai" ? [e, { ...e, client: "responses" }, { ...e, client: "gemini" }] : [e]))
  .map((e) => ({ ...e, name: `${e.client} client → ${e.backend}: ${e.fixture}${e.stream ? " (stream)" : ""}` }));

/** The recording's text and tool names, whatever the provider's format. */
function expected(e: Exchange): Expected {
  const tools: string[] = [];
  let text = "";
  const take = (t: unknown) => (text += str(t));
  if (e.backend === "openai") {
    const bodies = e.stream ? loadChunkFixture(e.fixture) : [loadJsonFixture(e.fixture)];
    for (const b of bodies)
      for (const c of arr(obj(b).choices)) {
        const m = obj(obj(c).message ?? obj(c).delta);
        take(m.content);
        for (const t of arr(m.tool_calls)) if (str(obj(obj(t).function).name)) tools.push(str(obj(obj(t).function).name));
      }
  } else if (e.backend === "anthropic") {
    if (e.stream) {
      for (const c of loadChunkFixture(e.fixture)) {
        take(obj(obj(c).delta).type === "text_delta" ? obj(obj(c).delta).text : "");
        if (obj(obj(c).content_block).type === "tool_use") tools.push(str(obj(obj(c).content_block).name));
      }
    } else
      for (const b of arr(obj(loadJsonFixture(e.fixture)).content)) {
        if (obj(b).type === "text") take(obj(b).text);
        if (obj(b).type === "tool_use") tools.push(str(obj(b).name));
      }
  } else {
    const bodies = e.stream ? geminiChunks(e.fixture) : [loadJsonFixture(e.fixture)];
    for (const b of bodies)
      for (const p of arr(obj(obj(arr(obj(b).candidates)[0]).content).parts)) {
        if (obj(p).thought !== true) take(obj(p).text);
        if (obj(p).functionCall) tools.push(str(obj(obj(p).functionCall).name));
      }
  }
  return { text, tools: tools.filter((t) => t !== "") };
}

/** Tool names compared as a set: a streamed call's argument chunks repeat its name. */
const unique = (names: string[]) => [...new Set(names)].sort().join();

/** A recorded Gemini stream's chunks, whatever file holds them (the emulator's own reader). */
function geminiChunks(fixture: string): unknown[] {
  return geminiStreamBytes(fixture)
    .toString("utf8")
    .split("\n")
    .filter((l) => l.startsWith("data: "))
    .map((l) => JSON.parse(l.slice(6)) as unknown);
}

const SERVER_TOOL_TYPES: Record<string, string> = {
  web_search: "web_search_20250305",
  web_fetch: "web_fetch_20250910",
  code_execution: "code_execution_20250825",
  bash_code_execution: "code_execution_20250825",
  text_editor_code_execution: "code_execution_20250825",
  tool_search_tool_regex: "tool_search_tool_regex_20251119",
  tool_search_tool_bm25: "tool_search_tool_bm25_20251119",
  advisor: "advisor_20260301",
};

/** The Anthropic request that produced a recording: its tools, MCP servers and, for a `.2` step, the `.1` answer as history. */
function anthropicRequest(e: Exchange): Json {
  const content = anthropicContent(e);
  const step = /\.(\d)$/.exec(e.fixture)?.[1];
  const previous = step && step !== "1" ? e.fixture.replace(/\.\d$/, ".1") : undefined;
  const history = previous && hasFixture(previous, "json") ? arr(obj(loadJsonFixture(previous)).content) : [];
  const blocks = [...content, ...history].map(obj);
  const tools = new Map<string, Json>();
  const servers = new Map<string, Json>();
  for (const b of blocks) {
    const name = str(b.name);
    if (b.type === "server_tool_use") {
      const type = SERVER_TOOL_TYPES[name] ?? `${name}_20250825`;
      tools.set(type, { type, name: type.startsWith("code_execution") ? "code_execution" : name });
    }
    if (b.type === "tool_use") tools.set(name, { name, description: name, input_schema: { type: "object" } });
    if (b.type === "mcp_tool_use") servers.set(str(b.server_name), { type: "url", url: "https://mcp.example.com/sse", name: str(b.server_name) });
  }
  const messages: Json[] = [{ role: "user", content: "Go ahead." }];
  if (history.length > 0) messages.push({ role: "assistant", content: history }, { role: "user", content: "Continue." });
  const body: Json = { model: MODELS.anthropic, max_tokens: 1024, messages, stream: e.stream };
  if (tools.size > 0) body.tools = [...tools.values()];
  if (servers.size > 0) body.mcp_servers = [...servers.values()];
  return body;
}

const WEATHER = { name: "weather", description: "Weather", parameters: { type: "object", properties: { location: { type: "string" } } } };
/** The same function for @google/genai, whose declarations take its `Type` enum. */
const GEMINI_WEATHER = { name: "weather", description: "Weather", parameters: { type: Type.OBJECT, properties: { location: { type: Type.STRING } } } };

interface Upstreams {
  anthropic: AnthropicUpstream;
  openai: OpenAIUpstream;
  gemini: GeminiUpstream;
}

function queue(up: Upstreams, e: Exchange): void {
  if (e.backend === "anthropic") up.anthropic.queue({ fixture: e.fixture, pacing: { splitEvents: true } });
  else if (e.backend === "openai") up.openai.queue({ fixture: e.fixture, pacing: { splitEvents: true } });
  else up.gemini.queue({ fixture: e.fixture, pacing: { splitEvents: true } });
}

/** Consumes an answer a refused request left queued, so the next exchange gets its own. */
async function drain(up: Upstreams): Promise<void> {
  const post = (url: string, body: Json, headers: Record<string, string> = {}) =>
    fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) }).then((r) => r.arrayBuffer());
  const user = [{ role: "user", content: "x" }];
  while (up.anthropic.pending > 0)
    await post(`${up.anthropic.url}/v1/messages`, { model: "m", max_tokens: 1, messages: user }, { "anthropic-version": "2023-06-01" });
  while (up.openai.pending > 0) await post(`${up.openai.url}/v1/chat/completions`, { model: "m", messages: user });
  while (up.gemini.pending > 0) await post(`${up.gemini.baseURL}/models/m:generateContent`, { contents: [{ role: "user", parts: [{ text: "x" }] }] });
}

/** Runs one exchange; returns why it failed, or undefined. */
async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of stream) out.push(item);
  return out;
}

async function run(e: Exchange, up: Upstreams, anthropic: Anthropic, openai: OpenAI, gemini: GoogleGenAI): Promise<string | undefined> {
  queue(up, e);
  const want = expected(e);
  const model = MODELS[e.backend];
  const withTools = want.tools.length > 0;
  if (e.client === "anthropic" && e.backend === "anthropic") return passThrough(e, up.anthropic, anthropic);
  let got: Expected;
  if (e.client === "anthropic") {
    const tools = withTools ? [...new Set(want.tools)].map((name) => ({ name, description: name, input_schema: { type: "object" as const } })) : undefined;
    const params = { model, max_tokens: 1024, messages: [{ role: "user" as const, content: "Go ahead." }], ...(tools && { tools }) };
    const message = e.stream ? await anthropic.messages.stream(params).finalMessage() : await anthropic.messages.create(params);
    got = {
      text: message.content.map((b) => (b.type === "text" ? b.text : "")).join(""),
      tools: message.content.flatMap((b) => (b.type === "tool_use" ? [b.name] : [])),
    };
  } else if (e.client === "responses") {
    const tools = withTools ? [...new Set(want.tools)].map((name) => ({ type: "function" as const, ...WEATHER, name, strict: false })) : undefined;
    const params = { model, input: "Go ahead.", ...(tools && { tools }) };
    const response = e.stream ? await openai.responses.stream(params).finalResponse() : await openai.responses.create(params);
    got = { text: response.output_text, tools: response.output.flatMap((o) => (o.type === "function_call" ? [o.name] : [])) };
  } else if (e.client === "gemini") {
    const declarations = withTools ? [...new Set(want.tools)].map((name) => ({ ...GEMINI_WEATHER, name })) : undefined;
    const params = { model, contents: "Go ahead.", ...(declarations && { config: { tools: [{ functionDeclarations: declarations }] } }) };
    const responses = e.stream ? await collect(await gemini.models.generateContentStream(params)) : [await gemini.models.generateContent(params)];
    const parts = responses.flatMap((r) => r.candidates?.[0]?.content?.parts ?? []);
    got = {
      text: parts.map((p) => (p.thought === true ? "" : (p.text ?? ""))).join(""),
      tools: parts.flatMap((p) => (p.functionCall?.name !== undefined ? [p.functionCall.name] : [])),
    };
  } else {
    const tools = withTools ? [...new Set(want.tools)].map((name) => ({ type: "function" as const, function: { ...WEATHER, name } })) : undefined;
    const params = { model, messages: [{ role: "user" as const, content: "Go ahead." }], ...(tools && { tools }) };
    const completion = e.stream ? await openai.chat.completions.stream(params).finalChatCompletion() : await openai.chat.completions.create(params);
    const message = completion.choices[0]?.message;
    got = {
      text: message?.content ?? "",
      // Read as the SDK hands them over: some providers' calls have no `type` (Mistral), which a same-schema hop keeps.
      tools: (message?.tool_calls ?? []).flatMap((c) => ("function" in c ? [c.function.name] : [])),
    };
  }
  if (got.text !== want.text) return `text ${JSON.stringify(got.text.slice(0, 60))} ≠ ${JSON.stringify(want.text.slice(0, 60))}`;
  if (unique(got.tools) !== unique(want.tools)) return `tools [${got.tools.join()}] ≠ [${want.tools.join()}]`;
  return undefined;
}

async function passThrough(e: Exchange, up: AnthropicUpstream, anthropic: Anthropic): Promise<string | undefined> {
  const body = anthropicRequest(e);
  const seen = up.requests.length;
  const response = await anthropic.messages
    .create(body as unknown as Anthropic.MessageCreateParamsNonStreaming, { headers: { "anthropic-beta": BETA } })
    .asResponse();
  const bytes = await response.text();
  const sent = up.requests[seen];
  if (!sent) return "nothing reached the provider";
  if (JSON.stringify(sent.json) !== JSON.stringify(body)) return "the provider got another body than the client's";
  if (sent.headers["anthropic-beta"] !== BETA) return `anthropic-beta ${String(sent.headers["anthropic-beta"])}`;
  if (response.status !== 200) return `status ${response.status}: ${bytes.slice(0, 200)}`;
  if (e.stream) return bytes === anthropicSseEvents(loadChunkLines(e.fixture)).join("") ? undefined : "stream bytes differ from the recording";
  return JSON.stringify(JSON.parse(bytes)) === JSON.stringify(loadJsonFixture(e.fixture)) ? undefined : "body differs from the recording";
}

/** Pass counts per client, for RESULTS.md. */
export const results: Record<string, { pass: number; total: number; failures: string[] }> = {};

for (const entry of ["front door", "Envoy + ext_proc"] as const) {
  describe(`replay of recorded exchanges via ${entry}`, () => {
    let up: Upstreams;
    let gateway: TestGateway;
    let anthropic: Anthropic;
    let openai: OpenAI;
    let gemini: GoogleGenAI;
    let closeEnvoy = () => Promise.resolve();

    before(async () => {
      up = { anthropic: await startAnthropicUpstream(), openai: await startOpenAIUpstream(), gemini: await startGeminiUpstream() };
      gateway = await startTestGateway(
        testConfig(`providers:
  - { name: anthropic, kind: anthropic, base_url: '${up.anthropic.baseURL}', models: [${MODELS.anthropic}] }
  - { name: openai, kind: openai, base_url: '${up.openai.baseURL}', models: [${MODELS.openai}] }
  - { name: gemini, kind: gemini, base_url: '${up.gemini.baseURL}', models: [${MODELS.gemini}], default: true }
`),
      );
      let base = `http://127.0.0.1:${gateway.frontDoor.port}`;
      if (entry === "Envoy + ext_proc") {
        const shipped = shippedEnvoySettings();
        const envoy = await startEnvoy({
          extProc: { ...shipped.extProc, address: gateway.extProcAddress },
          routes: (["anthropic", "openai", "gemini"] as const).map((p) => ({ header: "x-gearbox-upstream", value: p, cluster: p })),
          clusters: { anthropic: { url: up.anthropic.url }, openai: { url: up.openai.url }, gemini: { url: up.gemini.url } },
          bufferLimitBytes: shipped.bufferLimitBytes ?? 8 * 1024 * 1024,
        });
        base = envoy.url;
        closeEnvoy = () => envoy.close();
      }
      anthropic = new Anthropic({ baseURL: base, apiKey: "k", maxRetries: 0 });
      openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: "k", maxRetries: 0 });
      gemini = new GoogleGenAI({ apiKey: "k", httpOptions: { baseUrl: base } });
    });
    after(async () => {
      await closeEnvoy();
      await gateway.close();
      await Promise.all([up.anthropic.close(), up.openai.close(), up.gemini.close()]);
    });

    for (const client of CLIENTS) {
      test(`${client} clients: at least 98 % of runnable exchanges pass`, async () => {
        const key = `${client} via ${entry}`;
        const tally = (results[key] = { pass: 0, total: 0, failures: [] as string[] });
        const byBackend: Record<string, [number, number]> = {};
        for (const e of EXCHANGES.filter((x) => x.client === client)) {
          tally.total += 1;
          let why: string | undefined;
          try {
            why = await run(e, up, anthropic, openai, gemini);
          } catch (err) {
            why = err instanceof Error ? `${err.constructor.name}: ${err.message.slice(0, 200)}` : String(err);
          }
          await drain(up);
          const counts = (byBackend[e.backend] ??= [0, 0]);
          counts[1] += 1;
          if (why === undefined) counts[0] += 1;
          if (why === undefined) tally.pass += 1;
          else tally.failures.push(`${e.name}: ${why}`);
        }
        const rate = tally.pass / tally.total;
        const parts = Object.entries(byBackend).map(([b, [p, t]]) => `${b} ${p}/${t}`);
        console.log(`replay ${key}: ${tally.pass}/${tally.total} (${(rate * 100).toFixed(1)} %; ${parts.join(", ")})`);
        if (process.env.GEARBOX_REPLAY_REPORT) for (const f of tally.failures) console.log(`  ✗ ${f}`);
        assert.ok(tally.total > 50, "the replay has exchanges to run");
        assert.ok(rate >= 0.98, `${tally.pass}/${tally.total} passed; failures:\n${tally.failures.join("\n")}`);
      });
    }
  });
}
