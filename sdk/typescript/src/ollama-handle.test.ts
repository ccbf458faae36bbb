/**
 * The SDK's `ollama` ModelHandle against the Ollama emulator (`test/emulators/ollama-upstream.ts`),
 * a real HTTP server replaying `test/fixtures/ollama/` (bodies transcribed from Ollama's API docs:
 * no Ollama runs here and no recorded traffic exists, see that folder's README), through the
 * edge agent's engine and the official `ollama` client. What each answer must be is read from the
 * fixture replayed, and what the handle sent from the emulator's record.
 */
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import { ndjsonFixtureLines, startOllamaUpstream } from "../../../test/emulators/ollama-upstream.ts";
import { createModelHandle, type LocalChunk } from "./index.ts";

interface Line {
  message?: { content?: string };
  done?: boolean;
  prompt_eval_count?: number;
  eval_count?: number;
  error?: string;
}
const lines = (name: string) => ndjsonFixtureLines(name).map((l) => JSON.parse(l) as Line);
const textOf = (name: string) =>
  lines(name)
    .map((l) => l.message?.content ?? "")
    .join("");
const final = (name: string) => lines(name).find((l) => l.done === true) ?? {};

async function setup(t: TestContext, models = ["llama3.2"]) {
  // The official client console.logs on each non-JSON error body (the emulator's 404s for /api/show).
  t.mock.method(console, "log", () => undefined);
  const emulator = await startOllamaUpstream({ models });
  const handle = createModelHandle({ id: "phone-llama", engine: "ollama", source: "llama3.2", host: emulator.url });
  t.after(async () => {
    await handle.close();
    await emulator.close();
  });
  const chats = () => emulator.requests.filter((r) => r.path === "/api/chat").map((r) => JSON.parse(r.body.toString("utf8")) as Record<string, unknown>);
  return { emulator, handle, chats };
}

const ASK = [{ role: "user" as const, content: "Why is the sky blue?" }];

test("chat(): the stream's text and Ollama's token counts; an answer without logprobs is unscored (null)", async (t) => {
  const { handle, chats } = await setup(t);
  const answer = await handle.chat(ASK, { maxTokens: 32 });
  assert.equal(answer.text, textOf("ollama/chat-stream"));
  assert.deepEqual(answer.usage, { prompt_tokens: final("ollama/chat-stream").prompt_eval_count, completion_tokens: final("ollama/chat-stream").eval_count });
  assert.equal(answer.confidence, null, "the docs' stream carries no logprobs: the gateway upgrades such an answer");
  assert.equal(handle.loads, 1);
  const sent = chats().at(-1) ?? {};
  assert.equal(sent.model, "llama3.2", "the handle asks for the Ollama model named by its source, not its id");
  assert.deepEqual(sent.messages, ASK);
  assert.equal(sent.logprobs, true, "confidence needs Ollama's logprobs");
  assert.equal((sent.options as Record<string, unknown>).num_predict, 32);
});

test("chatStream(): text pieces in order, then the whole answer; a second answer does not reload", async (t) => {
  const { handle, emulator } = await setup(t);
  await handle.load(); // before the queue: loading asks the server too
  emulator.queue({ fixture: "ollama/chat-stream-history" }, { fixture: "ollama/chat-stream-history" });
  const chunks: LocalChunk[] = [];
  for await (const c of handle.chatStream(ASK)) chunks.push(c);
  const done = chunks.at(-1);
  assert.equal(done?.type, "done");
  const pieces = chunks.flatMap((c) => (c.type === "text" ? [c.text] : []));
  assert.equal(pieces.join(""), textOf("ollama/chat-stream-history"));
  if (done?.type === "done") assert.equal(done.answer.text, pieces.join(""));
  await handle.chat(ASK);
  assert.equal(handle.loads, 1);
});

test("generate(): one user turn (after the system prompt) on /api/chat, whole and streamed", async (t) => {
  const { handle, chats } = await setup(t);
  const whole = await handle.generate("Why is the sky blue?", { system: "Answer in one word." });
  let streamed = "";
  for await (const c of handle.generateStream("Why is the sky blue?")) if (c.type === "text") streamed += c.text;
  assert.equal(whole.text, textOf("ollama/chat-stream"));
  assert.equal(streamed, whole.text);
  const [first, second] = chats().slice(-2);
  assert.deepEqual(first?.messages, [
    { role: "system", content: "Answer in one word." },
    { role: "user", content: "Why is the sky blue?" },
  ]);
  assert.deepEqual(second?.messages, [{ role: "user", content: "Why is the sky blue?" }]);
});

test("an error inside the stream (Ollama's {error} line) rejects the answer with Ollama's message", async (t) => {
  const { handle, emulator } = await setup(t);
  await handle.load();
  emulator.queue({ fixture: "ollama/chat-stream-error" });
  const expected = lines("ollama/chat-stream-error").find((l) => l.error)?.error ?? "";
  await assert.rejects(handle.chat(ASK), (err: Error) => err.message.includes(expected));
});

test("a model the server does not have: load() rejects naming it, nothing is counted as loaded", async (t) => {
  const { handle } = await setup(t, ["qwen2.5:0.5b"]);
  await assert.rejects(handle.load(), /llama3\.2/);
  assert.equal(handle.loaded, false);
  assert.equal(handle.loads, 0);
});
