/**
 * Conversation compression: tokens sent against the whole history, and the share of planted
 * facts still present verbatim in what is sent, over deterministic multi-turn conversations
 * (English and Chinese, 5 to 40 turns, names, numbers, dates and decisions planted among
 * chatter), at several budgets; and the time to assemble and compress a 40-turn conversation.
 *
 *   node --import tsx bench/context/context.bench.ts [--conversations 200]
 *
 * The conversations are generated here from a fixed seed (nothing is downloaded or committed as
 * data). Facts are counted present when their exact text is in the summary or the kept turns.
 */
import { existsSync, readFileSync } from "node:fs";
import { silentLogger } from "../../common/telemetry/logger.ts";
import type { Message } from "../../common/canonical/types.ts";
import { conversationsSchema } from "../../extproc/conversation/config-schema.ts";
import { Conversations } from "../../extproc/conversation/conversations.ts";
import { MemoryConversationStore } from "../../extproc/conversation/memory-store.ts";
import { numberArg } from "../processes.ts";

const COUNT = numberArg("conversations", 200);

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

const EN = {
  names: ["Ada Lovelace", "Marcus Reed", "Priya Natarajan", "Tomás Ortega", "Hanna Berg", "Kenji Watanabe"],
  facts: [
    (r: () => number, n: string) => `My colleague ${n} owns the migration.`,
    (r: () => number) => `The budget is ${1000 + Math.floor(r() * 90000)} dollars.`,
    (r: () => number) => `We decided to launch on ${1 + Math.floor(r() * 28)} ${["March", "April", "June", "October"][Math.floor(r() * 4)]}.`,
    (r: () => number) => `The order number is ${100000 + Math.floor(r() * 899999)}.`,
    (r: () => number) => `We agreed to use ${["Postgres", "Kafka", "Redis", "Rust"][Math.floor(r() * 4)]} for the new service.`,
  ],
  chatter: [
    "That sounds good to me, thanks for explaining it so patiently and so clearly.",
    "I think that makes sense overall, and it is nice to talk this through with you.",
    "Sure, happy to help with that, let me think about how to put it into words.",
    "That is a fair point and I appreciate you raising it in this conversation.",
    "Okay, let us keep going, there is plenty more to talk about here today.",
    "Great, that helps a lot and clears up most of the confusion I had before.",
  ],
};
const ZH = {
  names: ["张伟", "李娜", "王芳", "刘洋"],
  facts: [
    (r: () => number, n: string) => `这个项目的负责人叫${n}。`,
    (r: () => number) => `预算是${1000 + Math.floor(r() * 90000)}元。`,
    (r: () => number) => `我们决定在${1 + Math.floor(r() * 12)}月${1 + Math.floor(r() * 28)}日上线。`,
    (r: () => number) => `订单号是${100000 + Math.floor(r() * 899999)}。`,
  ],
  chatter: [
    "好的，我明白你的意思了，谢谢你这么耐心地解释这些内容",
    "这个想法听起来很不错，我们可以继续慢慢聊一聊",
    "没问题，我很乐意帮忙，让我好好想一想怎么说比较好",
    "嗯嗯，这样说也有道理，感谢你提出这个看法",
  ],
};

interface Generated {
  history: Message[];
  facts: string[];
  next: Message;
}

/** Real prompts (vicuna-bench, ../shared/data/routing, Apache-2.0) for the user turns, when the file is there. */
const REAL_PROMPTS: string[] = (() => {
  const file = new URL("../../../shared/data/routing/vicuna-bench.jsonl", import.meta.url);
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .flatMap((l) => (JSON.parse(l) as { turns: string[] }).turns);
})();

/**
 * The same shape with real prompts as the user's chatter: each user turn is a vicuna-bench
 * question (names, numbers and capitalized words of its own, unlike the generated chatter), a
 * planted English fact in 35 % of them.
 */
function generateReal(seed: number): Generated {
  const r = rng(seed);
  const turns = 5 + Math.floor(r() * 36);
  const history: Message[] = [];
  const facts: string[] = [];
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)] as T;
  for (let t = 0; t < turns; t++) {
    const parts = [pick(REAL_PROMPTS)];
    if (r() < 0.35) {
      const fact = pick(EN.facts)(r, pick(EN.names));
      facts.push(fact);
      parts.push(fact);
    }
    history.push({ role: "user", content: parts.join(" ") });
    history.push({ role: "assistant", content: [pick(EN.chatter), pick(EN.chatter), pick(EN.chatter)].join(" ") });
  }
  return { history, facts, next: { role: "user", content: "What did we settle on?" } };
}

function generate(seed: number): Generated {
  const r = rng(seed);
  const lang = r() < 0.5 ? EN : ZH;
  const turns = 5 + Math.floor(r() * 36);
  const history: Message[] = [];
  const facts: string[] = [];
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)] as T;
  for (let t = 0; t < turns; t++) {
    const parts = [pick(lang.chatter), pick(lang.chatter)];
    if (r() < 0.35) {
      const fact = pick(lang.facts)(r, pick(lang.names));
      facts.push(fact);
      parts.splice(1, 0, fact);
    }
    history.push({ role: "user", content: parts.join(lang === EN ? " " : "。") });
    history.push({ role: "assistant", content: [pick(lang.chatter), pick(lang.chatter), pick(lang.chatter)].join(lang === EN ? " " : "。") });
  }
  return { history, facts, next: { role: "user", content: lang === EN ? "What did we settle on?" : "我们最后定了什么？" } };
}

async function run(share: number, windowTokens: number, conversations: Generated[]): Promise<string> {
  const settings = conversationsSchema.parse({ history_share: share, context_windows: { "gpt-4o": windowTokens } });
  let full = 0;
  let sentTokens = 0;
  let planted = 0;
  let kept = 0;
  for (const [i, c] of conversations.entries()) {
    const store = new MemoryConversationStore({ ttlMs: 60_000, maxConversations: 10 });
    await store.append("t", `c${i}`, c.history, "cloud");
    const turn = await new Conversations(store, settings, silentLogger()).open("t", `c${i}`, "openai", { model: "gpt-4o", messages: [] }, [c.next], "bench");
    if (turn instanceof Error) throw turn;
    const body = JSON.stringify(turn.forTarget("cloud", "gpt-4o"));
    full += turn.stats.historyTokens;
    sentTokens += turn.stats.sentTokens;
    planted += c.facts.length;
    kept += c.facts.filter((f) => body.includes(JSON.stringify(f).slice(1, -1))).length;
  }
  return `| ${windowTokens} × ${share} | ${full} | ${sentTokens} | ${(100 * (1 - sentTokens / full)).toFixed(1)} % | ${planted} | ${((100 * kept) / planted).toFixed(1)} % |`;
}

/** A 40-turn conversation whose every message is unique to `run` (no count or summary of another run applies). */
function unique(run: number): Generated {
  let c = generate(7);
  for (let s = 8; c.history.length < 80; s++) c = generate(s);
  // The generated messages are user and assistant ones with string content.
  const history = c.history.slice(0, 80).map((m, i) => ({ ...m, content: `${m.content as string} (ref ${run}-${i})` }));
  return { history, facts: c.facts, next: c.next };
}

/**
 * The time to assemble and compress a 40-turn (80-message) conversation, memory store read
 * included, two ways in one run: a steady turn (the conversation was seen at turn 39, its summary
 * kept; turn 40's exchange is new text, counted and summarized incrementally) and a cold one (a
 * conversation never seen: every message counted, the summary written from scratch — what each
 * turn cost before the counts and summary were kept).
 */
async function speed(runs = 2000, warmup = 200): Promise<string[]> {
  const settings = conversationsSchema.parse({ context_windows: { "gpt-4o": 2000 } });
  const steady: number[] = [];
  const cold: number[] = [];
  const turn = async (conversations: Conversations, id: string, next: Message): Promise<number> => {
    const t0 = performance.now();
    const opened = await conversations.open("t", id, "openai", { model: "gpt-4o", messages: [] }, [next], "bench");
    if (opened instanceof Error) throw opened;
    opened.full();
    opened.forTarget("cloud", "gpt-4o");
    return performance.now() - t0;
  };
  // Set up first, time after: the setup's garbage (turn 39 counted cold) does not land in the timings.
  const seen: [Conversations, Message][] = [];
  for (let i = 0; i < runs + warmup; i++) {
    const c = unique(i);
    const store = new MemoryConversationStore({ ttlMs: 60_000, maxConversations: 10 });
    const conversations = new Conversations(store, settings, silentLogger());
    await store.append("t", "s", c.history.slice(0, 78), "cloud");
    await turn(conversations, "s", c.history[78] as Message);
    await store.append("t", "s", c.history.slice(78), "cloud");
    seen.push([conversations, c.next]);
  }
  for (const [i, [conversations, next]] of seen.entries()) {
    const t = await turn(conversations, "s", next);
    if (i >= warmup) steady.push(t);
  }
  for (let i = 0; i < runs + warmup; i++) {
    const c = unique(runs + warmup + i);
    const store = new MemoryConversationStore({ ttlMs: 60_000, maxConversations: 10 });
    await store.append("t", "c", c.history, "cloud");
    const t = await turn(new Conversations(store, settings, silentLogger()), "c", c.next);
    if (i >= warmup) cold.push(t);
  }
  const line = (name: string, times: number[]): string => {
    times.sort((x, y) => x - y);
    const q = (p: number) => (times[Math.floor(p * (times.length - 1))] ?? NaN).toFixed(3);
    return `| ${name} | ${q(0.5)} | ${q(0.9)} | ${q(0.99)} | ${times.length} |`;
  };
  return [
    "| 40 turns (80 messages), assembly + extractive compression | p50 ms | p90 ms | p99 ms | runs |",
    "|---|---:|---:|---:|---:|",
    line("steady turn (turn 40's exchange new, summary kept from turn 39)", steady),
    line("cold (conversation never seen: all counted, summary from scratch)", cold),
  ];
}

// Timed first, in a fresh heap: the quality runs below leave ~200 MB of garbage whose collection
// would otherwise land in these timings (a full collection, not the turn's own cost).
const speedLines = await speed();
const conversations = Array.from({ length: COUNT }, (_, i) => generate(1000 + i));
console.log(`# conversation compression — ${new Date().toISOString()} — node ${process.version}, ${COUNT} conversations (English and Chinese, 5–40 turns)\n`);
console.log("| budget (window × share) | history tokens | sent tokens | saved | planted facts | kept verbatim |");
console.log("|---|---:|---:|---:|---:|---:|");
for (const [window, share] of [
  [128_000, 0.5],
  [4_096, 0.5],
  [2_000, 0.5],
  [1_000, 0.5],
] as const)
  console.log(await run(share, window, conversations));
if (REAL_PROMPTS.length > 0) {
  const real = Array.from({ length: COUNT }, (_, i) => generateReal(5000 + i));
  console.log(`\nUser turns from vicuna-bench's ${REAL_PROMPTS.length} real prompts (planted facts as above; assistant turns generated):\n`);
  console.log("| budget (window × share) | history tokens | sent tokens | saved | planted facts | kept verbatim |");
  console.log("|---|---:|---:|---:|---:|---:|");
  for (const [window, share] of [
    [128_000, 0.5],
    [4_096, 0.5],
    [2_000, 0.5],
    [1_000, 0.5],
  ] as const)
    console.log(await run(share, window, real));
} else console.log("\n(../shared/data/routing/vicuna-bench.jsonl not found: the real-prompt rows are skipped.)");
console.log("\nA gear change (edge ↔ cloud) summarizes whatever the budget; the rows below 128 k show what that sends.\n");
for (const line of speedLines) console.log(line);
