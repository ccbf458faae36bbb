/**
 * Upstream streams that break — cut mid-event, or an event that is not JSON — must end the
 * client's stream with one clean OpenAI-shaped error event, through both transports and for
 * every backend protocol, never with a hang or garbage.
 */
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import { startEnvoy, type EnvoyHarness } from "../harness/envoy.ts";
import { shippedEnvoySettings } from "../support/envoy-settings.ts";
import { startTestGateway, testConfig, type TestGateway } from "../support/gateway.ts";

interface Broken {
  kind: "openai" | "anthropic" | "gemini" | "ollama";
  contentType: string;
  /** Bytes the upstream sends before it ends the response. */
  body: string;
  what: string;
}

const SSE = "text/event-stream";
const CASES: Broken[] = [
  {
    kind: "openai",
    contentType: SSE,
    what: "cut mid-event",
    body: 'data: {"id":"a","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}\n\ndata: {"id":"a","choi',
  },
  {
    kind: "openai",
    contentType: SSE,
    what: "invalid JSON in an event",
    body: 'data: {"id":"a","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\ndata: {"choices": [oops]}\n\ndata: [DONE]\n\n',
  },
  {
    kind: "anthropic",
    contentType: SSE,
    what: "cut mid-event",
    body:
      'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":1}}}\n\n' +
      'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' +
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_de',
  },
  {
    kind: "anthropic",
    contentType: SSE,
    what: "invalid JSON in an event",
    body: 'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}\n\nevent: content_block_delta\ndata: {not json}\n\n',
  },
  {
    kind: "gemini",
    contentType: SSE,
    what: "cut mid-event",
    body: 'data: {"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"}}]}\r\n\r\ndata: {"candidates":[{"content":{"par',
  },
  {
    kind: "gemini",
    contentType: SSE,
    what: "invalid JSON in an event",
    body: 'data: {"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"}}]}\r\n\r\ndata: {"candidates": nope}\r\n\r\n',
  },
  {
    kind: "ollama",
    contentType: "application/x-ndjson",
    what: "cut mid-line",
    body: '{"model":"m","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"Hi"},"done":false}\n{"model":"m","crea',
  },
  {
    kind: "ollama",
    contentType: "application/x-ndjson",
    what: "invalid JSON line",
    body: '{"model":"m","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"Hi"},"done":false}\n{oops}\n',
  },
];

const BASE_PATH = { openai: "/v1", anthropic: "/v1", gemini: "/v1beta", ollama: "" } as const;

for (const broken of CASES) {
  describe(`${broken.kind} upstream stream ${broken.what}`, () => {
    let upstream: http.Server;
    let gateway: TestGateway;
    let envoy: EnvoyHarness;

    before(async () => {
      upstream = http.createServer((req, res) => {
        req.resume();
        req.on("end", () => {
          res.writeHead(200, { "content-type": broken.contentType });
          res.end(broken.body);
        });
      });
      await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
      const origin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
      gateway = await startTestGateway(testConfig(`providers:\n  - { name: up, kind: ${broken.kind}, base_url: '${origin}${BASE_PATH[broken.kind]}' }\n`));
      const shipped = shippedEnvoySettings();
      envoy = await startEnvoy({
        extProc: { ...shipped.extProc, address: gateway.extProcAddress },
        routes: [{ header: "x-gearbox-upstream", value: "up", cluster: "up" }],
        clusters: { up: { url: origin } },
      });
    });
    after(async () => {
      await envoy.close();
      await gateway.close();
      await new Promise<void>((resolve) => upstream.close(() => resolve()));
    });

    for (const transport of ["front door", "envoy + ext_proc"] as const) {
      test(`via ${transport}: the client's stream ends in one OpenAI error`, async () => {
        const base = transport === "front door" ? `http://127.0.0.1:${gateway.frontDoor.port}` : envoy.url;
        const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "k", maxRetries: 0, timeout: 10_000 });
        const stream = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }], stream: true });
        let text = "";
        await assert.rejects(
          (async () => {
            for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
          })(),
          (err: unknown) => err instanceof OpenAI.APIError && err.message.length > 0,
        );
        // Nothing garbled: what reached the client is a prefix of the good part. (A decoder that
        // fails on a slice drops the good events of that same slice.)
        assert.ok("Hi".startsWith(text), `unexpected text ${JSON.stringify(text)}`);
      });
    }
  });
}
