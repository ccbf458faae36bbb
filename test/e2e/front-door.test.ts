/** The conformance suite through the HTTP front door, plus front-door-only behaviour. */
import assert from "node:assert/strict";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startOpenAIUpstream } from "../emulators/openai-upstream.ts";
import { brokenTelemetry } from "../support/broken-telemetry.ts";
import { openAIProviderYaml, startTestGateway, testConfig } from "../support/gateway.ts";
import { MAX_REQUEST_BYTES, openAIConformance, PROVIDER_KEY } from "./openai-conformance.ts";

const limits = `limits:\n  max_request_bytes: ${MAX_REQUEST_BYTES}\n`;

openAIConformance("the HTTP front door", async (upstreamBaseURL) => {
  const gateway = await startTestGateway(testConfig(openAIProviderYaml(upstreamBaseURL, limits), { TEST_PROVIDER_KEY: PROVIDER_KEY }));
  return { baseURL: gateway.baseURL, close: () => gateway.close() };
});

test("front door: a client that leaves mid-stream cancels the upstream call", async () => {
  const upstream = await startOpenAIUpstream({ apiKey: PROVIDER_KEY, pacing: { delayMs: 20 } });
  const gateway = await startTestGateway(testConfig(openAIProviderYaml(upstream.baseURL), { TEST_PROVIDER_KEY: PROVIDER_KEY }));
  try {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: "app", maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: "gpt-4.1-nano", messages: [{ role: "user", content: "Hi" }], stream: true });
    let chunks = 0;
    for await (const _chunk of stream) {
      if (++chunks === 3) break; // leaving the loop aborts the HTTP request
    }
    await upstream.waitForAborted(1, 5000);
    assert.equal(upstream.aborted, 1);
  } finally {
    await gateway.close();
    await upstream.close();
  }
});

test("front door: an unreachable provider is a 502 OpenAI error, and the server stays up", async () => {
  const gateway = await startTestGateway(testConfig(openAIProviderYaml("http://127.0.0.1:9/v1"), { TEST_PROVIDER_KEY: PROVIDER_KEY }));
  try {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: "app", maxRetries: 0 });
    await assert.rejects(
      client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] }),
      (err: unknown) => err instanceof OpenAI.APIError && err.status === 502,
    );
    const health = await fetch(gateway.baseURL.replace("/v1", "/healthz"));
    assert.equal(health.status, 200);
    // The record says what the client got (502), not that the client went away (499).
    const records = gateway.logs.filter((l) => l.msg === "request");
    assert.equal(records.length, 1);
    assert.equal(records[0]?.status, 502);
    assert.equal(records[0]?.error_code, "upstream_unreachable");
  } finally {
    await gateway.close();
  }
});

test("front door: a provider that does not answer within its timeout is a 504, logged as 504", async () => {
  const silent = http.createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  const { port } = silent.address() as AddressInfo;
  const gateway = await startTestGateway(
    testConfig(openAIProviderYaml(`http://127.0.0.1:${port}/v1`).replace("api_key_env", "timeout_ms: 200\n    api_key_env"), {
      TEST_PROVIDER_KEY: PROVIDER_KEY,
    }),
  );
  try {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: "app", maxRetries: 0 });
    await assert.rejects(
      client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] }),
      (err: unknown) => err instanceof OpenAI.APIError && err.status === 504,
    );
    const records = gateway.logs.filter((l) => l.msg === "request");
    assert.equal(records.length, 1);
    assert.equal(records[0]?.status, 504);
    assert.equal(records[0]?.error_code, "upstream_timeout");
  } finally {
    await gateway.close();
    silent.closeAllConnections();
    await new Promise((resolve) => silent.close(resolve));
  }
});

test("front door: a client that leaves before the answer is logged as 499", async () => {
  const silent = http.createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  const { port } = silent.address() as AddressInfo;
  const gateway = await startTestGateway(testConfig(openAIProviderYaml(`http://127.0.0.1:${port}/v1`), { TEST_PROVIDER_KEY: PROVIDER_KEY }));
  try {
    const leaving = new AbortController();
    const sent = fetch(`${gateway.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "x" }] }),
      signal: leaving.signal,
    });
    await new Promise((r) => silent.once("request", r));
    leaving.abort();
    await assert.rejects(sent);
    for (let i = 0; i < 100 && !gateway.logs.some((l) => l.msg === "request"); i++) await new Promise((r) => setTimeout(r, 10));
    const records = gateway.logs.filter((l) => l.msg === "request");
    assert.equal(records.length, 1);
    assert.equal(records[0]?.status, 499);
  } finally {
    await gateway.close();
    silent.closeAllConnections();
    await new Promise((resolve) => silent.close(resolve));
  }
});

/** A provider answering a stream with `write`: its headers at once, then what `write` sends and when. */
async function streamingProvider(write: (res: http.ServerResponse, events: string[]) => void): Promise<{ url: string; close: () => Promise<void> }> {
  const chunk = (delta: object, extra: object = {}) =>
    `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;
  const events = [
    chunk({ role: "assistant", content: "Hel" }),
    chunk({ content: "lo" }),
    `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } })}\n\n`,
    "data: [DONE]\n\n",
  ];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      write(res, events);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** One streamed call through the gateway: when its headers and its first body byte came, and the whole text. */
function timedStream(baseURL: string): Promise<{ headersAt: number; firstByteAt: number; text: string }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(`${baseURL}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" } }, (res) => {
      const headersAt = performance.now() - t0;
      let firstByteAt = -1;
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (part: string) => {
        if (firstByteAt < 0) firstByteAt = performance.now() - t0;
        text += part;
      });
      res.on("end", () => resolve({ headersAt, firstByteAt, text }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content: "x" }] }));
  });
}

test("front door: a stream's headers reach the client before the provider's first token does", async () => {
  // Headers now, tokens 400 ms later: a client (and its first-byte timeout) must not wait for the token to see the answer begin.
  const provider = await streamingProvider((res, events) => {
    res.flushHeaders();
    setTimeout(() => res.end(events.join("")), 400);
  });
  const gateway = await startTestGateway(testConfig(openAIProviderYaml(provider.url), { TEST_PROVIDER_KEY: PROVIDER_KEY }));
  try {
    const { headersAt, firstByteAt, text } = await timedStream(gateway.baseURL);
    assert.ok(firstByteAt - headersAt >= 300, `headers at ${headersAt.toFixed(0)} ms, first token at ${firstByteAt.toFixed(0)} ms`);
    assert.match(text, /"content":"Hel"[\s\S]*"content":"lo"[\s\S]*data: \[DONE\]\n\n$/);
  } finally {
    await gateway.close();
    await provider.close();
  }
});

test("front door: a stream whose every event and end arrive in one read is answered whole, usage recorded", async () => {
  // The provider's whole stream in one write: the gateway translates the last bytes as the end (one write to the client).
  const provider = await streamingProvider((res, events) => res.end(events.join("")));
  const gateway = await startTestGateway(testConfig(openAIProviderYaml(provider.url), { TEST_PROVIDER_KEY: PROVIDER_KEY }));
  try {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: "app", maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "x" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let content = "";
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const part of stream) {
      content += part.choices[0]?.delta.content ?? "";
      usage = part.usage ?? usage;
    }
    assert.equal(content, "Hello");
    assert.equal(usage?.total_tokens, 5);
    for (let i = 0; i < 100 && !gateway.logs.some((l) => l.msg === "request"); i++) await new Promise((r) => setTimeout(r, 10));
    const record = gateway.logs.find((l) => l.msg === "request");
    assert.equal(record?.status, 200);
    assert.equal(record?.output_tokens, 2);
  } finally {
    await gateway.close();
    await provider.close();
  }
});

/** What the gateway's listening `port` writes to its clients, one string per socket write, while `body` runs. */
async function writesFrom<T>(port: number, body: () => Promise<T>): Promise<{ writes: string[]; value: T }> {
  type Written = { chunk: Buffer | string }[];
  const proto = net.Socket.prototype as unknown as {
    _write: (this: net.Socket, chunk: Buffer | string, encoding: string, cb: () => void) => void;
    _writev: (this: net.Socket, chunks: Written, cb: () => void) => void;
  };
  const { _write, _writev } = proto;
  const writes: string[] = [];
  proto._write = function (chunk, encoding, cb) {
    if (this.localPort === port) writes.push(String(chunk));
    _write.call(this, chunk, encoding, cb);
  };
  proto._writev = function (chunks, cb) {
    if (this.localPort === port) writes.push(chunks.map((c) => String(c.chunk)).join(""));
    _writev.call(this, chunks, cb);
  };
  try {
    return { writes, value: await body() };
  } finally {
    Object.assign(proto, { _write, _writev });
  }
}

/** An Anthropic client's streamed call through the gateway at `baseURL`: its text, and the gateway's socket writes meanwhile. */
function anthropicStreamWrites(baseURL: string): Promise<{ writes: string[]; value: string }> {
  const anthropic = new Anthropic({ baseURL: baseURL.replace(/\/v1$/, ""), apiKey: "app", maxRetries: 0 });
  return writesFrom(Number(new URL(baseURL).port), async () => {
    let text = "";
    for await (const event of anthropic.messages.stream({ model: "m", max_tokens: 16, messages: [{ role: "user", content: "x" }] }))
      if (event.type === "content_block_delta" && event.delta.type === "text_delta") text += event.delta.text;
    return text;
  });
}

test("front door: of a provider's burst, the first event leaves in its own write, before the rest is translated", async () => {
  // The whole stream in one write from the provider; an Anthropic client, so every event is translated.
  const provider = await streamingProvider((res, events) => res.end(events.join("")));
  const gateway = await startTestGateway(testConfig(openAIProviderYaml(provider.url), { TEST_PROVIDER_KEY: PROVIDER_KEY }));
  try {
    const { writes, value: text } = await anthropicStreamWrites(gateway.baseURL);
    assert.equal(text, "Hello");
    assert.ok(writes.length >= 2, `${writes.length} write(s)`);
    // The first write: the headers and the first event's translation ("Hel"), nothing of the second event.
    assert.match(writes[0] ?? "", /^HTTP\/1\.1 200[\s\S]*event: message_start[\s\S]*"text":"Hel"/);
    assert.doesNotMatch(writes[0] ?? "", /"text":"lo"|message_stop/);
    assert.match(writes.slice(1).join(""), /"text":"lo"[\s\S]*event: message_stop/);
  } finally {
    await gateway.close();
    await provider.close();
  }
});

test("front door: with another call in flight, a provider's burst leaves in one write (no first event on its own)", async () => {
  // The first call is held at the provider until the end; the second's whole stream comes in one write.
  let release: (() => void) | undefined;
  const provider = await streamingProvider((res, events) => {
    if (release) return res.end(events.join(""));
    let released = false;
    release = () => {
      if (released) return;
      released = true;
      res.end(events.join(""));
    };
  });
  const gateway = await startTestGateway(testConfig(openAIProviderYaml(provider.url), { TEST_PROVIDER_KEY: PROVIDER_KEY }));
  try {
    const openai = new OpenAI({ baseURL: gateway.baseURL, apiKey: "app", maxRetries: 0 });
    const waiting = openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "held" }], stream: true }).then(async (stream) => {
      let text = "";
      for await (const part of stream) text += part.choices[0]?.delta.content ?? "";
      return text;
    });
    for (let i = 0; i < 200 && !release; i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(release, "the first call reached the provider");
    const { writes, value: text } = await anthropicStreamWrites(gateway.baseURL);
    assert.equal(text, "Hello");
    // The write that carries the first event's translation carries the rest and the end too.
    const first = writes.find((w) => w.includes('"text":"Hel"')) ?? "";
    assert.match(first, /"text":"Hel"[\s\S]*"text":"lo"[\s\S]*event: message_stop/);
    release();
    assert.equal(await waiting, "Hello");
  } finally {
    release?.(); // a failed assertion must not leave the held call open
    await gateway.close();
    await provider.close();
  }
});

test("front door: GET on a POST endpoint → 405 with allow", async () => {
  const gateway = await startTestGateway(testConfig(openAIProviderYaml("http://127.0.0.1:9/v1")));
  try {
    const res = await fetch(`${gateway.baseURL}/chat/completions`);
    assert.equal(res.status, 405);
    assert.equal(res.headers.get("allow"), "POST");
  } finally {
    await gateway.close();
  }
});

test("front door: the answer leaves before its record is made, so a failing record costs the caller nothing", async () => {
  const upstream = await startOpenAIUpstream({ apiKey: PROVIDER_KEY });
  const sink = brokenTelemetry();
  const gateway = await startTestGateway(testConfig(openAIProviderYaml(upstream.baseURL), { TEST_PROVIDER_KEY: PROVIDER_KEY }), { telemetry: sink.telemetry });
  try {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: "app", maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: "gpt-4.1-nano", messages: [{ role: "user", content: "Hi" }] });
    assert.equal(answer.object, "chat.completion");
    const stream = await client.chat.completions.create({ model: "gpt-4.1-nano", messages: [{ role: "user", content: "Hi again" }], stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    assert.ok(text.length > 0);
    assert.equal(sink.handed, 2, "each request was still handed to telemetry, after its answer");
    assert.equal(gateway.logs.filter((l) => l.msg === "request record failed").length, 2);
  } finally {
    await gateway.close();
    await upstream.close();
  }
});
