/**
 * One suite, two transports: the official `openai` SDK as the client, recorded OpenAI traffic as
 * the upstream, and Gearbox in between — either its HTTP front door or Envoy (the harness) with
 * Gearbox as its ext_proc service. Both must give the client the same observable behaviour.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import { loadChunkFixture, loadJsonFixture } from "../emulators/fixtures.ts";
import { startOpenAIUpstream, type OpenAIUpstream } from "../emulators/openai-upstream.ts";

export const PROVIDER_KEY = "sk-provider-test-key";
export const MAX_REQUEST_BYTES = 64 * 1024;

export interface Transport {
  /** The SDK's `baseURL` (ends in `/v1`). */
  baseURL: string;
  close(): Promise<void>;
}

/** Builds Gearbox (and whatever fronts it) against the emulator's base URL. */
export type TransportFactory = (upstreamBaseURL: string) => Promise<Transport>;

interface ChatFixture {
  choices: { message: { content: string | null } }[];
}
interface ChunkFixture {
  choices?: { delta?: { content?: string | null; tool_calls?: { index?: number; function?: { arguments?: string } }[] } }[];
}

function fixtureText(name: string): string {
  return (loadChunkFixture(name) as ChunkFixture[]).map((c) => c.choices?.[0]?.delta?.content ?? "").join("");
}

export function openAIConformance(name: string, makeTransport: TransportFactory): void {
  describe(`OpenAI client through ${name}`, () => {
    let upstream: OpenAIUpstream;
    let transport: Transport;
    let client: OpenAI;

    before(async () => {
      upstream = await startOpenAIUpstream({ apiKey: PROVIDER_KEY });
      transport = await makeTransport(upstream.baseURL);
      client = new OpenAI({ baseURL: transport.baseURL, apiKey: "sk-app-key-that-never-reaches-the-provider", maxRetries: 0 });
    });
    after(async () => {
      await transport.close();
      await upstream.close();
    });

    const post = (path: string, body: string | Buffer, headers: Record<string, string> = { "content-type": "application/json" }) =>
      fetch(`${transport.baseURL}${path}`, { method: "POST", headers, body });

    async function assertOpenAIError(res: Response, status: number, code?: string): Promise<{ message: string; param: string | null }> {
      assert.equal(res.status, status);
      assert.match(res.headers.get("content-type") ?? "", /application\/json/);
      const body = (await res.json()) as { error: { message: string; type: string; param: string | null; code: string | null } };
      assert.equal(typeof body.error.message, "string");
      assert.ok(body.error.message.length > 0);
      assert.equal(typeof body.error.type, "string");
      if (code !== undefined) assert.equal(body.error.code, code);
      return body.error;
    }

    test("non-streaming chat: recorded answer, provider key injected, control headers stripped", async () => {
      const fixture = loadJsonFixture("vercel-ai/openai/openai-text") as ChatFixture;
      upstream.queue({ fixture: "vercel-ai/openai/openai-text" });
      const seen = upstream.requests.length;
      const { data, response } = await client.chat.completions
        .create(
          { model: "gpt-4.1-nano", messages: [{ role: "user", content: "Invent a holiday" }], temperature: 0.2 },
          { headers: { "x-gearbox-route": "cloud" } },
        )
        .withResponse();
      assert.equal(data.choices[0]?.message.content, fixture.choices[0]?.message.content);
      assert.ok(data.usage && data.usage.total_tokens > 0);
      assert.equal(response.headers.get("x-gearbox-route"), "cloud");
      assert.match(response.headers.get("x-gearbox-request-id") ?? "", /.+/);
      const received = upstream.requests[seen];
      assert.ok(received);
      assert.equal(received.headers.authorization, `Bearer ${PROVIDER_KEY}`);
      assert.equal(received.headers["x-gearbox-route"], undefined);
      assert.deepEqual(received.json, { model: "gpt-4.1-nano", messages: [{ role: "user", content: "Invent a holiday" }], temperature: 0.2 });
    });

    test("streaming chat: deltas intact across split SSE writes; forced usage chunk hidden", async () => {
      upstream.queue({ fixture: "vercel-ai/openai/openai-text", pacing: { splitEvents: true, eventsPerWrite: 3 } });
      const seen = upstream.requests.length;
      const stream = await client.chat.completions.create({ model: "gpt-4.1-nano", messages: [{ role: "user", content: "Hi" }], stream: true });
      let text = "";
      let usageChunks = 0;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? "";
        if (chunk.usage) usageChunks++;
      }
      assert.equal(text, fixtureText("vercel-ai/openai/openai-text"));
      assert.equal(usageChunks, 0, "the client did not ask for usage, so it gets none");
      const sent = upstream.requests[seen]?.json as { stream_options?: { include_usage?: boolean } };
      assert.equal(sent.stream_options?.include_usage, true, "Gearbox asks upstream for usage to account the stream");
    });

    test("streaming chat with include_usage: the usage chunk reaches the client", async () => {
      upstream.queue({ fixture: "vercel-ai/openai/openai-text" });
      const stream = await client.chat.completions.create({
        model: "gpt-4.1-nano",
        messages: [{ role: "user", content: "Hi" }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let usage: OpenAI.CompletionUsage | null | undefined;
      for await (const chunk of stream) usage = chunk.usage ?? usage;
      assert.ok(usage && usage.completion_tokens > 0);
    });

    test("streamed tool call: argument deltas assemble into the recorded JSON", async () => {
      upstream.queue({ fixture: "vercel-ai/deepseek/deepseek-tool-call", pacing: { splitEvents: true } });
      const stream = await client.chat.completions.create({
        model: "deepseek-chat",
        messages: [{ role: "user", content: "Weather in SF?" }],
        tools: [{ type: "function", function: { name: "weather", parameters: { type: "object", properties: { location: { type: "string" } } } } }],
        tool_choice: "auto",
        stream: true,
      });
      let args = "";
      let finish: string | null | undefined;
      for await (const chunk of stream) {
        args += chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? "";
        finish = chunk.choices[0]?.finish_reason ?? finish;
      }
      const expected = (loadChunkFixture("vercel-ai/deepseek/deepseek-tool-call") as ChunkFixture[])
        .map((c) => c.choices?.[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? "")
        .join("");
      assert.equal(args, expected);
      assert.doesNotThrow(() => JSON.parse(args) as unknown);
      assert.equal(finish, "tool_calls");
    });

    test("non-streaming tool call", async () => {
      upstream.queue({ fixture: "vercel-ai/xai/xai-tool-call" });
      const res = await client.chat.completions.create({
        model: "grok-3-mini",
        messages: [{ role: "user", content: "Weather in SF?" }],
        tools: [{ type: "function", function: { name: "weather", parameters: { type: "object" } } }],
      });
      const call = res.choices[0]?.message.tool_calls?.[0];
      assert.ok(call && call.type === "function");
      assert.equal(call.function.name, "weather");
      assert.deepEqual(JSON.parse(call.function.arguments), { location: "San Francisco" });
    });

    test("upstream error replayed as an OpenAI error with its status", async () => {
      upstream.queue({ fixture: "vercel-ai/openai/reasoning-model-legacy-parameter-error", status: 400 });
      await assert.rejects(
        client.chat.completions.create({ model: "o3", messages: [{ role: "user", content: "x" }], max_tokens: 10 }),
        (err: unknown) => err instanceof OpenAI.BadRequestError && err.status === 400 && /max_tokens/.test(err.message),
      );
    });

    test("embeddings", async () => {
      const res = await client.embeddings.create({ model: "text-embedding-3-small", input: ["a", "b"], encoding_format: "float" });
      assert.equal(res.data.length, 2);
      assert.ok((res.data[0]?.embedding.length ?? 0) > 0);
    });

    test("bad input: invalid JSON → 400 invalid_json", async () => {
      await assertOpenAIError(await post("/chat/completions", "{not json"), 400, "invalid_json");
    });

    test("bad input: wrong content-type → 415", async () => {
      await assertOpenAIError(
        await post("/chat/completions", "model=x", { "content-type": "application/x-www-form-urlencoded" }),
        415,
        "unsupported_media_type",
      );
    });

    test("bad input: empty body → 400 empty_body", async () => {
      await assertOpenAIError(await post("/chat/completions", ""), 400, "empty_body");
    });

    test("bad input: body over the limit → 413", async () => {
      const big = JSON.stringify({ model: "m", messages: [{ role: "user", content: "x".repeat(MAX_REQUEST_BYTES) }] });
      await assertOpenAIError(await post("/chat/completions", big), 413, "request_too_large");
    });

    test("bad input: missing messages → 400 naming the field", async () => {
      const error = await assertOpenAIError(await post("/chat/completions", JSON.stringify({ model: "gpt-4.1-nano" })), 400);
      assert.equal(error.param, "messages");
    });

    test("bad input: wrong type deep inside → 400 naming the path", async () => {
      const body = JSON.stringify({
        model: "m",
        messages: [
          { role: "user", content: "hi" },
          { role: "user", content: [{ type: "image_url", image_url: {} }] },
        ],
      });
      const error = await assertOpenAIError(await post("/chat/completions", body), 400);
      assert.equal(error.param, "messages[1].content[0].image_url.url");
    });

    test("bad input: invalid UTF-8 → 400 invalid_encoding", async () => {
      const bytes = Buffer.concat([Buffer.from('{"model":"m","messages":[{"role":"user","content":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}]}')]);
      await assertOpenAIError(await post("/chat/completions", bytes), 400, "invalid_encoding");
    });

    test("bad input: unknown endpoint → 404 OpenAI-shaped", async () => {
      // The front door answers this itself; through Envoy the path is not Gearbox's and passes
      // through untouched to the provider (here with the caller's own provider key), which 404s.
      const headers = { "content-type": "application/json", authorization: `Bearer ${PROVIDER_KEY}` };
      const error = await assertOpenAIError(await post("/no/such/endpoint", "{}", headers), 404);
      assert.match(error.message, /Invalid URL/);
    });

    test("bad input: bad x-gearbox-route → 400", async () => {
      const res = await post("/chat/completions", JSON.stringify({ model: "m", messages: [{ role: "user", content: "x" }] }), {
        "content-type": "application/json",
        "x-gearbox-route": "sideways",
      });
      await assertOpenAIError(res, 400, "invalid_route_hint");
    });

    test("the server is still up and correct after every bad input", async () => {
      upstream.queue({ fixture: "vercel-ai/mistral/mistral-text" });
      const res = await client.chat.completions.create({ model: "mistral-small", messages: [{ role: "user", content: "hello" }] });
      assert.equal(res.choices[0]?.message.content, (loadJsonFixture("vercel-ai/mistral/mistral-text") as ChatFixture).choices[0]?.message.content);
    });
  });
}
