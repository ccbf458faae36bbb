/**
 * Canonical ⇄ OpenAI Chat Completions / Embeddings, as a backend codec. Used when the client
 * speaks another schema (an Anthropic client served by OpenAI); an OpenAI client on an OpenAI
 * backend takes the byte-preserving path in `../openai-openai.ts` instead.
 */
import type { ChatChunk, ChatResponse, EmbeddingsResponse } from "../../../common/canonical/types.ts";
import { GatewayError } from "../../../common/errors.ts";
import { fail, ok, type Result } from "../../../common/result.ts";
import { isObject } from "../../../common/schemas/fields.ts";
import { toOpenAIChatRequest } from "../../../common/schemas/openai-chat-emit.ts";
import { parseOpenAIChatChunk, parseOpenAIChatResponse } from "../../../common/schemas/openai-chat-response.ts";
import { parseOpenAIEmbeddingsResponse, toOpenAIEmbeddingsRequest } from "../../../common/schemas/openai-embeddings.ts";
import { SseParser } from "../../../common/schemas/sse.ts";
import type { ChatBackend, ChatStreamDecoder, EmbeddingsBackend } from "../codec.ts";
import { upstreamError } from "../upstream-error.ts";
import { parseUpstreamJson, readUpstreamJson, upstreamMalformed } from "../upstream-json.ts";

const JSON_HEADERS = { "content-type": "application/json" };

/** A 502 for an upstream body that is not what its API promises. */
export function malformedUpstream(what: string, cause?: unknown): GatewayError {
  return upstreamMalformed(`The upstream sent a malformed ${what}.`, cause);
}

export const openaiChatBackend: ChatBackend = {
  request(req, ctx) {
    const upstream = Object.assign({}, req, { model: ctx.upstreamModel });
    if (ctx.forceStreamUsage && req.stream) upstream.includeUsage = true;
    return { path: "/chat/completions", headers: JSON_HEADERS, body: Buffer.from(JSON.stringify(toOpenAIChatRequest(upstream))) };
  },
  response(body): Result<ChatResponse, GatewayError> {
    const parsed = parseOpenAIChatResponse(readUpstreamJson(body));
    return parsed.ok ? parsed : fail(malformedUpstream("chat completion"));
  },
  error: upstreamError,
  stream: () => new OpenAIStreamDecoder(),
};

/** OpenAI SSE → canonical chunks; `[DONE]` is the terminal event. */
class OpenAIStreamDecoder implements ChatStreamDecoder {
  private readonly parser = new SseParser();
  private done = false;

  push(chunk: Buffer): ChatChunk[] {
    return this.decode(this.parser.push(chunk).map((e) => e.data));
  }

  end(): ChatChunk[] {
    const tail = this.parser.flush();
    const chunks = this.decode(tail.map((e) => e.data));
    if (!this.done) throw new GatewayError(502, "upstream_error", "The upstream stream ended before [DONE].", { code: "upstream_stream_truncated" });
    return chunks;
  }

  private decode(data: string[]): ChatChunk[] {
    const out: ChatChunk[] = [];
    for (const d of data) {
      if (d === "[DONE]") {
        this.done = true;
        continue;
      }
      const event = parseUpstreamJson(d, "stream event");
      if (!event.ok) throw event.errors[0];
      const json = event.value;
      if (isObject(json) && isObject(json.error)) {
        const message = typeof json.error.message === "string" ? json.error.message : "Upstream stream error";
        throw new GatewayError(502, "upstream_error", message, { code: "upstream_stream_error" });
      }
      const parsed = parseOpenAIChatChunk(json);
      if (!parsed.ok) throw malformedUpstream("stream chunk");
      out.push(parsed.value);
    }
    return out;
  }
}

export const openaiEmbeddingsBackend: EmbeddingsBackend = {
  request(req, ctx) {
    return {
      path: "/embeddings",
      headers: JSON_HEADERS,
      body: Buffer.from(JSON.stringify(toOpenAIEmbeddingsRequest(Object.assign({}, req, { model: ctx.upstreamModel })))),
    };
  },
  response(body): Result<EmbeddingsResponse, GatewayError> {
    const parsed = parseOpenAIEmbeddingsResponse(readUpstreamJson(body));
    return parsed.ok ? ok(parsed.value) : fail(malformedUpstream("embeddings response"));
  },
  error: upstreamError,
};
