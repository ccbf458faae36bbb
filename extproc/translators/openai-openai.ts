/**
 * OpenAI-speaking client → OpenAI-compatible backend (OpenAI itself, and every provider that is
 * configuration only). The same schema on both sides: bodies are left byte-for-byte alone
 * unless something must change (the model name, usage forced on streams), and usage is read
 * on the way back.
 */
import type { ChatRequest, EmbeddingsRequest, Usage } from "../canonical/types.ts";
import { isObject } from "../schemas/fields.ts";
import { toOpenAIChatRequest } from "../schemas/openai-chat-emit.ts";
import { parseOpenAIUsage } from "../schemas/openai-chat-response.ts";
import { toOpenAIEmbeddingsRequest } from "../schemas/openai-embeddings.ts";
import { SseParser, type SseEvent } from "../schemas/sse.ts";
import { upstreamError } from "./upstream-error.ts";
import type { Headers, StreamTranslator, TranslatedChunk, TranslatedResponse, TranslateContext, Translator, UpstreamRequest } from "./translator.ts";

const JSON_HEADERS: Headers = { "content-type": "application/json" };
const USAGE_OBJECT = /"usage"\s*:\s*\{/;

export const openaiToOpenAIChat: Translator<ChatRequest> = {
  request(req: ChatRequest, ctx: TranslateContext): UpstreamRequest {
    const forceUsage = ctx.forceStreamUsage && req.stream && req.includeUsage !== true;
    if (req.model === ctx.upstreamModel && !forceUsage) return { path: "/chat/completions", headers: JSON_HEADERS };
    const upstream: ChatRequest = { ...req, model: ctx.upstreamModel };
    if (forceUsage) upstream.includeUsage = true;
    return { path: "/chat/completions", headers: JSON_HEADERS, body: Buffer.from(JSON.stringify(toOpenAIChatRequest(upstream))) };
  },
  response: readJsonResponse,
  stream(): StreamTranslator {
    return new OpenAIStream(false);
  },
};

/** The chat translator for a request whose stream usage Gearbox forced on: it hides that chunk. */
export const openaiToOpenAIChatForcedUsage: Translator<ChatRequest> = {
  ...openaiToOpenAIChat,
  stream(): StreamTranslator {
    return new OpenAIStream(true);
  },
};

export const openaiToOpenAIEmbeddings: Translator<EmbeddingsRequest> = {
  request(req: EmbeddingsRequest, ctx: TranslateContext): UpstreamRequest {
    if (req.model === ctx.upstreamModel) return { path: "/embeddings", headers: JSON_HEADERS };
    const body = toOpenAIEmbeddingsRequest({ ...req, model: ctx.upstreamModel });
    return { path: "/embeddings", headers: JSON_HEADERS, body: Buffer.from(JSON.stringify(body)) };
  },
  response: readJsonResponse,
  stream(): StreamTranslator {
    return new OpenAIStream(false);
  },
};

/** Success: unchanged bytes, usage read. Error: unchanged if OpenAI-shaped, else shaped. */
function readJsonResponse(status: number, headers: Headers, body: Buffer): TranslatedResponse {
  let json: unknown;
  try {
    json = JSON.parse(body.toString("utf8"));
  } catch {
    json = undefined;
  }
  if (status >= 400) {
    const clientShaped = isObject(json) && isObject(json.error) && typeof json.error.message === "string";
    return { error: { error: upstreamError(status, headers, body), clientShaped } };
  }
  const usage = isObject(json) ? parseOpenAIUsage(json.usage) : undefined;
  return usage ? { usage } : {};
}

/** Reads usage off the stream; with `hideUsageChunk`, drops the usage-only chunk Gearbox forced. */
class OpenAIStream implements StreamTranslator {
  private readonly parser = new SseParser();
  private usage: Usage | undefined;

  constructor(private readonly hideUsageChunk: boolean) {}

  push(chunk: Buffer): TranslatedChunk {
    return this.handle(this.parser.push(chunk));
  }

  end(): TranslatedChunk {
    return this.handle(this.parser.flush());
  }

  private handle(events: SseEvent[]): TranslatedChunk {
    const kept: Buffer[] = [];
    let dropped = false;
    for (const event of events) {
      const usage = USAGE_OBJECT.test(event.data) ? this.readUsage(event.data) : undefined;
      if (usage) this.usage = usage;
      if (this.hideUsageChunk && usage?.usageOnly) dropped = true;
      else kept.push(event.raw);
    }
    const out: TranslatedChunk = {};
    if (this.hideUsageChunk) out.body = dropped || kept.length !== 1 ? Buffer.concat(kept) : (kept[0] ?? Buffer.alloc(0));
    if (this.usage && events.length > 0) out.usage = this.usage;
    return out;
  }

  private readUsage(data: string): (Usage & { usageOnly: boolean }) | undefined {
    try {
      const json: unknown = JSON.parse(data);
      if (!isObject(json)) return undefined;
      const usage = parseOpenAIUsage(json.usage);
      return usage && { ...usage, usageOnly: Array.isArray(json.choices) && json.choices.length === 0 };
    } catch {
      return undefined;
    }
  }
}
