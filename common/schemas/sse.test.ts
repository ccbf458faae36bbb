import assert from "node:assert/strict";
import { test } from "node:test";
import { SseParser } from "./sse.ts";

const STREAM = Buffer.from(
  'data: {"a":1}\n\n' + ": keep-alive comment\n\n" + 'event: message_start\r\ndata: {"b":"é"}\r\n\r\n' + "data: line1\ndata: line2\n\n" + "data: [DONE]\n\n",
);

function collect(chunks: Buffer[]): { events: string[]; raw: Buffer } {
  const parser = new SseParser();
  const events = chunks.flatMap((c) => parser.push(c)).concat(parser.flush());
  return { events: events.map((e) => `${e.event ?? ""}|${e.data}`), raw: Buffer.concat(events.map((e) => e.raw)) };
}

test("events come out whole, whatever the chunking (every split point)", () => {
  const whole = collect([STREAM]);
  assert.deepEqual(whole.events, ['|{"a":1}', 'message_start|{"b":"é"}', "|line1\nline2", "|[DONE]"]);
  for (let i = 1; i < STREAM.length; i++) {
    const split = collect([STREAM.subarray(0, i), STREAM.subarray(i)]);
    assert.deepEqual(split.events, whole.events, `split at byte ${i}`);
  }
});

test("byte-at-a-time delivery yields the same events", () => {
  const bytes = [...STREAM].map((b) => Buffer.from([b]));
  assert.deepEqual(collect(bytes).events, collect([STREAM]).events);
});

test("an unterminated tail is delivered by flush", () => {
  const parser = new SseParser();
  assert.deepEqual(parser.push(Buffer.from("data: x")), []);
  assert.equal(parser.buffered, 7);
  assert.deepEqual(
    parser.flush().map((e) => e.data),
    ["x"],
  );
});

test("one-line data events read the same as the general parse (CR, no space, empty, colons)", () => {
  // The parser's fast path (one \`data:\` line) against the same events where a comment line forces the general parse.
  for (const line of [
    'data: {"a":1}',
    'data:{"a":1}',
    "data:",
    "data: ",
    "data:  two spaces",
    "data: a:b: c",
    'data: {"x":"\r"}',
    "data: é ✓ 😀",
    "data: x\ry",
  ]) {
    for (const end of ["\n\n", "\r\n\r\n", "\r\n\n", "\n\r\n"]) {
      const fast = new SseParser().push(Buffer.from(line + end));
      const general = new SseParser().push(Buffer.from(": c\n" + line + end));
      assert.deepEqual(
        fast.map((e) => [e.event, e.data]),
        general.map((e) => [e.event, e.data]),
        JSON.stringify(line + end),
      );
      assert.equal(fast.length, 1);
      assert.equal(fast[0]?.raw.toString("utf8"), line + end);
    }
  }
});
