/**
 * Pieces of a request's processing timed two ways each, warm (called back to back) and cold (4 MB
 * of other memory touched between calls, as a gateway answering one client at a time finds its
 * caches: the client and the upstream ran in between), in alternating blocks; medians of twelve
 * blocks. What the sixteenth pass of issue 25 decided with (bench/RESULTS.md): a change judged
 * here is judged on the same machine at the same moment, which the whole-gateway bench could not
 * do on a noisy host.
 *
 *   node --import tsx bench/cpu/cold-pieces.ts > /dev/null     (the log lines go to stdout)
 *
 * - metrics: the five series a cloud request moves, on prom-client's own Counter/Histogram and on
 *   the hot series Gearbox ships (`telemetry/hot-series.ts`).
 * - runaway fingerprint: SHA-256 over the parsed body serialized again, and over the body's bytes
 *   read as Latin-1 text (the sixteenth pass); then that, and a hash fed the scope and the bytes as
 *   they are (what ships since the seventeenth, `governance/runaway.ts`), short and ~20 KB.
 * - token estimate of a chat (admission's reservation): every character's code tested against the
 *   CJK ranges, and a regular-expression test first (what ships, `governance/limits.ts`); the
 *   estimate that ships also counts the output and the price, the "before" only the text.
 * - request log line: pino's `logger.info(record)`, and the same line made by one `JSON.stringify`
 *   of the record written to pino's destination (not shipped: ~1 µs less cold here, but with the
 *   checks a real replacement needs — level, a logger pino would change — it measured 8.3 against
 *   pino's 7.8 µs cold in a one-off, and it would reach into pino through `pino.symbols`).
 * - depth check of a 100-message conversation of content parts (`schemas/json-depth.ts`): one walk
 *   that builds every field's path, as before the seventeenth pass, and a walk for depths alone
 *   first (what ships; the path only for a body past the limit).
 * - OpenAI stream's upstream body (usage forced), a short request and a 40-message conversation:
 *   the canonical request written out as OpenAI's JSON again, as before the seventeenth pass, and
 *   `stream_options` added to the client's bytes (what ships, `translators/openai-openai.ts`).
 */
import { hash } from "node:crypto";
import { Counter, Histogram, Registry } from "prom-client";
import { HotCounter, HotHistogram } from "../../extproc/telemetry/hot-series.ts";
import { createLogger } from "../../common/telemetry/logger.ts";
import { pino } from "pino";
import type { JsonObject } from "../../common/schemas/fields.ts";
import { parseOpenAIChatRequest } from "../../common/schemas/openai-chat-request.ts";
import { toOpenAIChatRequest } from "../../common/schemas/openai-chat-emit.ts";
import { openAIChatBody } from "../../extproc/translators/openai-openai.ts";
import { requestFingerprint } from "../../extproc/governance/runaway.ts";
import { estimateChat, tokensByCharacter } from "../../extproc/governance/limits.ts";
import type { ChatRequest } from "../../common/canonical/types.ts";
import { offendingField, tooDeep } from "../../common/schemas/json-depth.ts";

const TRASH = new Uint8Array(4 << 20);
const sweep = () => {
  for (let j = 0; j < TRASH.length; j += 64) TRASH[j] = ((TRASH[j] ?? 0) + 1) & 0xff;
};
const median = (x: number[]) => [...x].sort((p, q) => p - q)[x.length >> 1] ?? NaN;

/** ns per call of `a` and `b` (given the call's index), warm or cold. */
function compare(cold: boolean, a: (i: number) => unknown, b: (i: number) => unknown): [number, number] {
  const n = cold ? 3000 : 50_000;
  const times: [number[], number[]] = [[], []];
  for (let block = 0; block < 12; block++)
    for (const which of block % 2 ? [1, 0] : [0, 1]) {
      const f = which === 0 ? a : b;
      let t = 0n;
      for (let i = 0; i < n; i++) {
        if (cold) sweep();
        const s = process.hrtime.bigint();
        f(i);
        t += process.hrtime.bigint() - s;
      }
      times[which as 0 | 1].push(Number(t) / n);
    }
  return [median(times[0]), median(times[1])];
}

function metrics(): [(i: number) => void, (i: number) => void] {
  const buckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
  const names = {
    requests: ["endpoint", "route", "model", "tenant", "status"],
    duration: ["endpoint", "route"],
    tokens: ["type", "route", "model", "tenant"],
    cost: ["provider", "model", "tenant"],
  };
  type Config = { name: string; help: string; labelNames: string[]; registers: Registry[] };
  /** The four metrics of a cloud request, made by `counter` and `histogram` in a registry of their own. */
  const four = <C, H>(counter: (c: Config) => C, histogram: (c: Config & { buckets: number[] }) => H) => {
    const registers = [new Registry()];
    const of = (name: string, labelNames: string[]) => ({ name, help: name, labelNames, registers });
    return {
      requests: counter(of("r", names.requests)),
      duration: histogram({ ...of("d", names.duration), buckets }),
      tokens: counter(of("t", names.tokens)),
      cost: counter(of("c", names.cost)),
    };
  };
  const own = four(
    (c) => new Counter(c),
    (c) => new Histogram(c),
  );
  const hot = four(
    (c) => new HotCounter(c),
    (c) => new HotHistogram(c),
  );
  const [endpoint, route, tenant] = ["chat_completions", "cloud", "default"];
  // The model as parsed from each request's body: a fresh string every time.
  const model = () => JSON.parse('"gpt-4.1-nano"') as string;
  return [
    (i) => {
      const m = model();
      own.requests.inc({ endpoint, route, model: m, tenant, status: String(200) });
      own.duration.observe({ endpoint, route }, (0.25 + (i % 50)) / 1000);
      own.tokens.inc({ type: "input", route, model: m, tenant }, 16);
      own.tokens.inc({ type: "output", route, model: m, tenant }, 363);
      own.cost.inc({ provider: "openai", model: m, tenant }, 0.000147);
    },
    (i) => {
      const m = model();
      hot.requests.inc([endpoint, route, m, tenant, String(200)]);
      hot.duration.observe([endpoint, route], (0.25 + (i % 50)) / 1000);
      hot.tokens.inc(["input", route, m, tenant], 16);
      hot.tokens.inc(["output", route, m, tenant], 363);
      hot.cost.inc(["openai", m, tenant], 0.000147);
    },
  ];
}

/** Request bodies of `turns` messages (a conversation's history after the first two), one non-ASCII character in each. */
function requestBodies(turns: number, stream: boolean): Buffer[] {
  return Array.from({ length: 1000 }, (_, i) =>
    Buffer.from(
      JSON.stringify({
        model: "gpt-4.1-nano",
        messages: [
          { role: "system", content: "You are a helpful assistant." },
          ...Array.from({ length: turns - 2 }, (_, t) => ({
            role: t % 2 ? "assistant" : "user",
            content: `Turn ${t}: ${"Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(8)}`,
          })),
          { role: "user", content: `What is the capital of France? Café ${i}.` },
        ],
        max_tokens: 64,
        ...(stream && { stream: true }),
      }),
    ),
  );
}

/** One of `requestBodies`, parsed as the front door parses it. */
function chatRequest(raw: JsonObject): ChatRequest {
  const read = parseOpenAIChatRequest(raw);
  if (!read.ok) throw new Error("the bench's request did not parse");
  return read.value;
}

const FINGERPRINT_SCOPE = "default\na:127.0.0.1\nchat_completions\ngpt-4.1-nano\nwhole";

/** The sixteenth pass's change: the parsed body serialized again, then its bytes read as Latin-1 text into the one-shot hash. */
function fingerprints(): [(i: number) => void, (i: number) => void] {
  const bodies = requestBodies(2, false);
  const parsed = bodies.map((b) => JSON.parse(b.toString("utf8")) as unknown);
  return [
    (i) => hash("sha256", `${FINGERPRINT_SCOPE}\n${JSON.stringify(parsed[i % 1000])}`, "hex").slice(0, 32),
    (i) => hash("sha256", `${FINGERPRINT_SCOPE}\n${bodies[i % 1000]!.toString("latin1")}`, "hex").slice(0, 32),
  ];
}

/** The seventeenth pass's: the bytes read as Latin-1 text into the one-shot hash, then the scope and the bytes as they are (ships). */
function fingerprintBytes(turns: number): () => [(i: number) => void, (i: number) => void] {
  return () => {
    const bodies = requestBodies(turns, false);
    return [
      (i) => hash("sha256", `${FINGERPRINT_SCOPE}\n${bodies[i % 1000]!.toString("latin1")}`, "hex").slice(0, 32),
      (i) => requestFingerprint(FINGERPRINT_SCOPE, bodies[i % 1000]!),
    ];
  };
}

/** A chat's token estimate over a conversation of `turns` messages (what admission reserves). */
function tokenEstimates(turns: number): () => [(i: number) => void, (i: number) => void] {
  return () => {
    const reqs = requestBodies(turns, false).map((b) => chatRequest(JSON.parse(b.toString("utf8")) as JsonObject));
    const contentTokens = (req: ChatRequest, count: (text: string) => number) => {
      let n = 0;
      for (const m of req.messages) n += 4 + (typeof m.content === "string" ? count(m.content) : 0);
      return n;
    };
    return [(i) => contentTokens(reqs[i % 1000]!, tokensByCharacter), (i) => estimateChat(reqs[i % 1000]!, undefined)];
  };
}

function logLines(): [(i: number) => void, (i: number) => void] {
  const logger = createLogger("info");
  // One literal with every field in the order `requestRecord` builds it (the same object shape).
  const record = (i: number) => ({
    request_id: `c5609747-6007-4d73-b8b1-e0cd69f1${String(i % 10_000).padStart(4, "0")}`,
    trace_id: undefined,
    transport: "front_door",
    tenant: "default",
    key: undefined,
    endpoint: "chat_completions",
    model: "gpt-4.1-nano",
    stream: false,
    policy: undefined,
    edge_intent: undefined,
    duration_ms: 0.25 + (i % 7),
    route: "cloud",
    reason: "default_provider:openai",
    cache: undefined,
    cache_layer: undefined,
    cache_similarity: undefined,
    cascade: undefined,
    calibration: undefined,
    provider: "openai",
    upstream_model: "gpt-4.1-nano",
    status: 200,
    error_code: undefined,
    degraded: undefined,
    runaway: undefined,
    fallback: undefined,
    attempts: undefined,
    retries: undefined,
    upstream_attempts: undefined,
    input_tokens: 16,
    output_tokens: 363,
    cost_usd: 0.000147,
    cloud_cost_avoided_usd: undefined,
    ttft_ms: undefined,
    shadow: undefined,
    shadow_route: undefined,
    shadow_reason: undefined,
    shadow_cache: undefined,
    shadow_status: undefined,
    shadow_error_code: undefined,
    conversation: undefined,
    data_boundary: undefined,
  });
  const records = Array.from({ length: 1000 }, (_, i) => record(i));
  const l = logger as unknown as Record<symbol, unknown>;
  const S = pino.symbols;
  const stream = l[S.streamSym] as { write(line: string): unknown };
  return [
    (i) => logger.info(records[i % 1000], "request"),
    (i) => {
      const json = JSON.stringify(records[i % 1000]);
      stream.write(
        `${(l[S.lsCacheSym] as Record<number, string>)[30]}${(l[S.timeSym] as () => string)()}${l[S.chindingsSym] as string},${json.slice(1, -1)},"msg":"request"}\n`,
      );
    },
  ];
}

/** A streamed OpenAI request of `turns` messages as the front door has it: its bytes, parsed. */
function streamBodies(turns: number): () => [(i: number) => void, (i: number) => void] {
  return () => {
    const sent = requestBodies(turns, true);
    const raws = sent.map((bytes) => JSON.parse(bytes.toString("utf8")) as JsonObject);
    const reqs = raws.map((raw) => Object.assign(chatRequest(raw), { includeUsage: true }));
    return [
      (i) => Buffer.from(JSON.stringify(toOpenAIChatRequest(reqs[i % 1000]!))),
      (i) => openAIChatBody(raws[i % 1000]!, undefined, true, {}, sent[i % 1000]),
    ];
  };
}

/** The depth check of a conversation of `turns` messages whose content is a list of parts (more brackets than the check's shortcut takes). */
function depthChecks(turns: number): () => [(i: number) => void, (i: number) => void] {
  return () => {
    const bodies = Array.from(
      { length: 100 },
      (_, i) =>
        JSON.parse(
          JSON.stringify({
            model: "gpt-4.1-nano",
            messages: Array.from({ length: turns }, (_, t) => ({ role: t % 2 ? "assistant" : "user", content: [{ type: "text", text: `Turn ${t} of ${i}` }] })),
          }),
        ) as unknown,
    );
    return [(i) => offendingField(bodies[i % 100], 64), (i) => tooDeep(bodies[i % 100])];
  };
}

const pieces: [string, string, string, () => [(i: number) => void, (i: number) => void]][] = [
  ["metrics, five series", "prom-client", "hot series (ships)", metrics],
  ["runaway fingerprint", "body serialized again", "body's bytes as Latin-1 text", fingerprints],
  ["runaway fingerprint, 2 messages", "bytes as Latin-1 text", "scope and bytes hashed (ships)", fingerprintBytes(2)],
  ["… 40 messages (~20 KB)", "bytes as Latin-1 text", "scope and bytes hashed (ships)", fingerprintBytes(40)],
  ["token estimate, 2 messages", "every character tested", "regex test first (ships)", tokenEstimates(2)],
  ["… 40 messages (~20 KB)", "every character tested", "regex test first (ships)", tokenEstimates(40)],
  ["depth check, 100 messages of parts", "one walk with paths", "depths first (ships)", depthChecks(100)],
  ["request log line", "pino (ships)", "one JSON.stringify", logLines],
  ["OpenAI stream's upstream body, 2 messages", "canonical written out", "option added to the bytes (ships)", streamBodies(2)],
  ["… 40 messages (~20 KB)", "canonical written out", "option added to the bytes (ships)", streamBodies(40)],
];
console.error(`# Pieces of a request, warm and cold — ${new Date().toISOString()} — node ${process.version}; ns per call, medians of 12 alternating blocks\n`);
console.error("| piece | A | B | A warm | B warm | A cold | B cold | B against A, cold |");
console.error("|---|---|---|---:|---:|---:|---:|---:|");
for (const [piece, nameA, nameB, make] of pieces) {
  const [a, b] = make();
  const warm = compare(false, a, b);
  const cold = compare(true, a, b);
  console.error(
    `| ${piece} | ${nameA} | ${nameB} | ${warm[0].toFixed(0)} | ${warm[1].toFixed(0)} | ${cold[0].toFixed(0)} | ${cold[1].toFixed(0)} | ${((cold[1] / cold[0] - 1) * 100).toFixed(1)} % |`,
  );
}
