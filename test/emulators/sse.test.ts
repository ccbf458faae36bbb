/** SSE framing and pacing: the plan is exact, and paced writes reach the client separately. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:http";
import { loadChunkLines } from "./fixtures.ts";
import { startOpenAIUpstream } from "./openai-upstream.ts";
import { chunkLinesToSseEvents, planSseWrites } from "./sse.ts";

const events = chunkLinesToSseEvents(loadChunkLines("vercel-ai/mistral/mistral-text"));

void test("chunk lines are framed as data events and end with [DONE]", () => {
  assert.equal(events.length, 9);
  assert.ok(events.slice(0, -1).every((event) => /^data: \{.*\}\n\n$/.test(event)));
  assert.equal(events.at(-1), "data: [DONE]\n\n");
});

void test("grouped writes keep event boundaries", () => {
  const writes = planSseWrites(events, { eventsPerWrite: 4, delayMs: 0, splitEvents: false });
  assert.deepEqual(
    writes.map((w) => w.toString("utf8")),
    [events.slice(0, 4).join(""), events.slice(4, 8).join(""), events[8]],
  );
});

void test("split writes cut inside every event and lose no byte", () => {
  const writes = planSseWrites(events, { eventsPerWrite: 1, delayMs: 0, splitEvents: true });
  assert.equal(writes.length, events.length + 1);
  assert.equal(Buffer.concat(writes).toString("utf8"), events.join(""));
  for (const write of writes.slice(0, -1)) assert.ok(!write.toString("utf8").endsWith("\n\n"), "no write but the last ends an event");
  assert.ok(
    writes.slice(1, -1).every((write) => write.includes("\n\ndata: ")),
    "each middle write spans a boundary",
  );
});

void test("split writes cut inside multi-byte characters when an event has them", () => {
  const text = chunkLinesToSseEvents(loadChunkLines("vercel-ai/openai/openai-text"));
  const writes = planSseWrites(text, { eventsPerWrite: 1, delayMs: 0, splitEvents: true });
  assert.equal(Buffer.concat(writes).toString("utf8"), text.join(""));
  const midCharacter = writes.filter((write) => write.toString("utf8").endsWith("\uFFFD"));
  // The three events with non-ASCII text (U+2014 and U+2019) are each cut inside the character.
  assert.equal(midCharacter.length, 3);
});

void test("paced split writes arrive on the wire as separate reads", async (t) => {
  const emulator = await startOpenAIUpstream();
  t.after(() => emulator.close());
  emulator.queue({ fixture: "vercel-ai/mistral/mistral-text", pacing: { splitEvents: true, delayMs: 10 } });
  const reads = await new Promise<string[]>((resolve, reject) => {
    const req = request(`${emulator.baseURL}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" } }, (res) => {
      const received: string[] = [];
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => received.push(chunk));
      res.on("end", () => resolve(received));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(JSON.stringify({ model: "mistral-small-latest", messages: [], stream: true }));
  });
  assert.equal(reads.join(""), events.join(""));
  assert.ok(reads.length > events.length / 2, `expected many reads, got ${reads.length}`);
  assert.ok(
    reads.some((read) => !read.endsWith("\n\n")),
    "some read ends mid-event",
  );
});
