/**
 * The Anthropic emulator, checked with the official `@anthropic-ai/sdk` as the client: if the SDK
 * parses what the emulator sends (bodies, SSE events, errors), Gearbox tests can trust it as a
 * stand-in for Anthropic.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import Anthropic from "@anthropic-ai/sdk";
import type { MessageParam, RawMessageStreamEvent } from "@anthropic-ai/sdk/resources/messages";
import { FIXTURES_DIR, loadChunkFixture, loadJsonFixture } from "./fixtures.ts";
import { anthropicSseEvents, startAnthropicUpstream, type AnthropicUpstream, type AnthropicUpstreamOptions } from "./anthropic-upstream.ts";

const API_KEY = "sk-ant-emulator-test-key-0001";
const MODEL = "claude-sonnet-4-6";
const MESSAGES: MessageParam[] = [{ role: "user", content: "Hello, how are you?" }];
const DIR = "vercel-ai/anthropic";
const files = readdirSync(`${FIXTURES_DIR}${DIR}`);
const named = (suffix: string): string[] =>
  files
    .filter((f) => f.endsWith(suffix))
    .map((f) => `${DIR}/${f.slice(0, -suffix.length)}`)
    .sort();

async function setup(t: TestContext, options: AnthropicUpstreamOptions = {}): Promise<{ emulator: AnthropicUpstream; client: Anthropic }> {
  const emulator = await startAnthropicUpstream({ apiKey: API_KEY, ...options });
  t.after(() => emulator.close());
  const client = new Anthropic({ apiKey: API_KEY, baseURL: emulator.url, maxRetries: 0 });
  return { emulator, client };
}

async function collect(stream: AsyncIterable<RawMessageStreamEvent>): Promise<RawMessageStreamEvent[]> {
  const events: RawMessageStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The recorded events the SDK yields: all but `ping`, which it skips. */
function withoutPings(fixture: string): unknown[] {
  return loadChunkFixture(fixture).filter((e) => (e as { type?: unknown }).type !== "ping");
}

void test("non-streaming: the SDK gets the recorded message and the request id", async (t) => {
  const { emulator, client } = await setup(t);
  const message = await client.messages.create({ model: MODEL, max_tokens: 64, messages: MESSAGES });
  assert.deepEqual(message, loadJsonFixture(`${DIR}/anthropic-text`));
  assert.equal(message.content[0]?.type === "text" && message.content[0].text.startsWith("Hello! I'm doing well"), true);
  assert.equal(message._request_id, "req_emulator_1");
  assert.equal(emulator.requests[0]?.fixture, `${DIR}/anthropic-text`, "the default fixture");
});

void test("every recorded body and stream replays unchanged through the SDK", async (t) => {
  const { emulator, client } = await setup(t);
  const bodies = named(".json");
  const streams = named(".chunks.txt");
  assert.equal(bodies.length + streams.length, 56);
  for (const fixture of bodies) {
    emulator.queue({ fixture });
    const message = await client.messages.create({ model: MODEL, max_tokens: 64, messages: MESSAGES });
    assert.deepEqual(message, loadJsonFixture(fixture), fixture);
  }
  for (const fixture of streams) {
    emulator.queue({ fixture });
    const events = await collect(await client.messages.create({ model: MODEL, max_tokens: 64, messages: MESSAGES, stream: true }));
    assert.deepEqual(events, withoutPings(fixture), fixture);
  }
});

void test("streams are framed as Anthropic frames them: event name = payload type", async (t) => {
  const { emulator } = await setup(t);
  emulator.queue({ fixture: `${DIR}/anthropic-text` });
  const res = await fetch(`${emulator.url}/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": API_KEY, "anthropic-version": "2023-06-01", "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL, max_tokens: 64, messages: MESSAGES, stream: true }),
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
  const text = await res.text();
  const first = text.split("\n\n")[0];
  assert.match(first ?? "", /^event: message_start\ndata: \{"type":"message_start",/);
  assert.equal(text.match(/^event: ping$/gm)?.length, 1);
  assert.ok(text.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n'));
  assert.throws(() => anthropicSseEvents(['{"no":"type"}']), /without a 'type'/);
});

void test("the SDK's MessageStream accumulates a recorded tool call and thinking", async (t) => {
  const { emulator, client } = await setup(t);
  emulator.queue({ fixture: `${DIR}/anthropic-json-other-tool.1` }, { fixture: `${DIR}/anthropic-clear-thinking.1` });
  const tool = await client.messages.stream({ model: MODEL, max_tokens: 64, messages: MESSAGES }).finalMessage();
  assert.equal(tool.stop_reason, "tool_use");
  assert.deepEqual(tool.content, [{ type: "tool_use", id: "toolu_019Zvehfe1XQWweT1pm7okyt", name: "weather", input: { location: "San Francisco" } }]);
  assert.equal(tool.usage.output_tokens, 28);
  const thinking = await client.messages.stream({ model: MODEL, max_tokens: 64, messages: MESSAGES }).finalMessage();
  assert.equal(
    thinking.content[0]?.type === "thinking" ? thinking.content[0].thinking : "",
    "The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185",
  );
  assert.equal(thinking.content[1]?.type === "text" ? thinking.content[1].text : "", "925 ÷ 5 = 185");
});

void test("split-SSE pacing: writes cut mid-event (inside multi-byte characters too) still parse", async (t) => {
  const { emulator, client } = await setup(t, { pacing: { splitEvents: true } });
  emulator.queue({ fixture: `${DIR}/anthropic-clear-thinking.1` }, { fixture: `${DIR}/anthropic-tool-no-args`, pacing: { delayMs: 1 } });
  const thinking = await collect(await client.messages.create({ model: MODEL, max_tokens: 64, messages: MESSAGES, stream: true }));
  assert.deepEqual(thinking, withoutPings(`${DIR}/anthropic-clear-thinking.1`));
  const tool = await collect(await client.messages.create({ model: MODEL, max_tokens: 64, messages: MESSAGES, stream: true }));
  assert.deepEqual(tool, withoutPings(`${DIR}/anthropic-tool-no-args`));
  // One cut per event, hence one more write than events (22 and 13 recorded events).
  assert.deepEqual([emulator.requests[0]?.stream?.writes, emulator.requests[1]?.stream?.writes], [23, 14]);
});

void test("error replay: a 529 overloaded_error is the SDK's OverloadedError, streaming or not", async (t) => {
  const { emulator, client } = await setup(t);
  const overloaded = { type: "overloaded_error", message: "Overloaded" };
  emulator.queue({ error: overloaded }, { error: overloaded });
  for (const stream of [false, true]) {
    await assert.rejects(client.messages.create({ model: MODEL, max_tokens: 64, messages: MESSAGES, stream }), (err: unknown) => {
      assert.ok(err instanceof Anthropic.OverloadedError);
      assert.equal(err.status, 529);
      assert.equal(err.type, "overloaded_error");
      assert.equal(err.apiMessage, "Overloaded");
      assert.equal(err.requestID, stream ? "req_emulator_2" : "req_emulator_1");
      return true;
    });
  }
});

void test("error replay carries the queued status and headers (429 with retry-after)", async (t) => {
  const { emulator, client } = await setup(t);
  emulator.queue({
    error: { type: "rate_limit_error", message: "Number of request tokens has exceeded your per-minute rate limit" },
    headers: { "retry-after": "7" },
  });
  await assert.rejects(client.messages.create({ model: MODEL, max_tokens: 64, messages: MESSAGES }), (err: unknown) => {
    assert.ok(err instanceof Anthropic.RateLimitError);
    assert.equal(err.headers.get("retry-after"), "7");
    assert.equal(err.type, "rate_limit_error");
    return true;
  });
});

void test("an in-band error event mid-stream makes the SDK throw with the error type", async (t) => {
  const { emulator, client } = await setup(t);
  emulator.queue({ fixture: `${DIR}/anthropic-text`, streamError: { afterEvents: 4, type: "overloaded_error", message: "Overloaded" } });
  const seen: RawMessageStreamEvent[] = [];
  await assert.rejects(
    (async () => {
      for await (const event of await client.messages.create({ model: MODEL, max_tokens: 64, messages: MESSAGES, stream: true })) seen.push(event);
    })(),
    (err: unknown) => {
      assert.ok(err instanceof Anthropic.APIError);
      assert.equal(err.type, "overloaded_error");
      return true;
    },
  );
  assert.deepEqual(
    seen.map((e) => e.type),
    ["message_start", "content_block_start", "content_block_delta"],
    "ping skipped, then the error",
  );
});

void test("auth and version: Anthropic's 401 and 400 bodies; x-api-key or Bearer passes", async (t) => {
  const { emulator, client } = await setup(t);
  const wrong = new Anthropic({ apiKey: "sk-ant-wrong", baseURL: emulator.url, maxRetries: 0 });
  await assert.rejects(wrong.messages.create({ model: MODEL, max_tokens: 64, messages: MESSAGES }), (err: unknown) => {
    assert.ok(err instanceof Anthropic.AuthenticationError);
    assert.equal(err.apiMessage, "invalid x-api-key");
    return true;
  });
  const post = (headers: Record<string, string>, body: unknown, path = "/v1/messages"): Promise<Response> =>
    fetch(`${emulator.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  const errorOf = async (res: Response): Promise<[number, unknown]> => [res.status, await res.json()];
  const valid = { model: MODEL, max_tokens: 64, messages: MESSAGES };
  const v1 = { "x-api-key": API_KEY, "anthropic-version": "2023-06-01" };
  assert.deepEqual(await errorOf(await post({ "anthropic-version": "2023-06-01" }, valid)), [
    401,
    { type: "error", error: { type: "authentication_error", message: "x-api-key header is required" } },
  ]);
  assert.deepEqual(await errorOf(await post({ "x-api-key": API_KEY }, valid)), [
    400,
    { type: "error", error: { type: "invalid_request_error", message: "anthropic-version: header is required" } },
  ]);
  assert.deepEqual(await errorOf(await post(v1, { model: MODEL, messages: MESSAGES })), [
    400,
    { type: "error", error: { type: "invalid_request_error", message: "max_tokens: Field required" } },
  ]);
  assert.deepEqual(await errorOf(await post({ ...v1, "anthropic-version": "2026-10-21" }, { ...valid, temperature: 1 })), [
    400,
    { type: "error", error: { type: "invalid_request_error", message: "temperature: Extra inputs are not permitted" } },
  ]);
  assert.equal((await post(v1, valid, "/v1/complete")).status, 404);
  // x-api-key wins over a Bearer token, as at Anthropic.
  assert.equal((await post({ ...v1, authorization: "Bearer sk-ant-wrong" }, { ...valid, temperature: 1 })).status, 200);
  const message = await client.messages.create(valid);
  assert.equal(message.type, "message");
  assert.equal(emulator.pending, 0);
});

void test("requests log: method, path, headers and body as received (SDK 1.x: Bearer key, version 2026-10-21)", async (t) => {
  const { emulator, client } = await setup(t);
  await client.messages.create({ model: MODEL, max_tokens: 64, messages: MESSAGES }, { headers: { "x-gearbox-test": "1" } });
  const [recorded] = emulator.requests;
  assert.ok(recorded);
  assert.equal(recorded.method, "POST");
  assert.equal(recorded.path, "/v1/messages");
  assert.equal(recorded.headers.authorization, `Bearer ${API_KEY}`);
  assert.equal(recorded.headers["x-api-key"], undefined);
  assert.equal(recorded.headers["anthropic-version"], "2026-10-21");
  assert.equal(recorded.headers["x-gearbox-test"], "1");
  assert.deepEqual(recorded.json, { model: MODEL, max_tokens: 64, messages: MESSAGES });
  assert.deepEqual(JSON.parse(recorded.body.toString("utf8")), recorded.json);
});

void test("client disconnect mid-stream is counted as aborted; a full stream is not", async (t) => {
  const { emulator, client } = await setup(t, { pacing: { delayMs: 5 } });
  emulator.queue({ fixture: `${DIR}/anthropic-clear-tool-uses.1` }, { fixture: `${DIR}/anthropic-text` });
  let seen = 0;
  for await (const _event of await client.messages.create({ model: MODEL, max_tokens: 64, messages: MESSAGES, stream: true })) {
    seen += 1;
    if (seen === 3) break; // the SDK aborts the request
  }
  await emulator.waitForAborted(1);
  const cut = emulator.requests[0]?.stream;
  assert.equal(cut?.aborted, true);
  assert.ok(cut.writesSent < cut.writes, `stopped early: ${cut.writesSent}/${cut.writes}`);
  await collect(await client.messages.create({ model: MODEL, max_tokens: 64, messages: MESSAGES, stream: true }));
  assert.deepEqual(emulator.requests[1]?.stream, { writes: 12, writesSent: 12, aborted: false });
  assert.equal(emulator.aborted, 1);
});

void test("misuse fails loudly: unknown fixture, empty entry, stream asked of a body-only recording", async (t) => {
  const { emulator, client } = await setup(t);
  assert.throws(() => emulator.queue({ fixture: `${DIR}/does-not-exist` }), /has no recorded form/);
  assert.throws(() => emulator.queue({}), /needs a fixture or an error/);
  emulator.queue({ fixture: `${DIR}/anthropic-memory-20250818.1` });
  await assert.rejects(client.messages.create({ model: MODEL, max_tokens: 64, messages: MESSAGES, stream: true }), (err: unknown) => {
    assert.ok(err instanceof Anthropic.InternalServerError);
    assert.match(err.apiMessage ?? "", /has no \.chunks\.txt/);
    return true;
  });
});
