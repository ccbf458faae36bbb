/** Canonical → what an OpenAI SDK expects: chat completion JSON, `chat.completion.chunk` SSE, errors. */
import type { ChatChunk, ChatRequest } from "../../../common/canonical/types.ts";
import { toErrorResponse, type GatewayError } from "../../../common/errors.ts";
import { toOpenAIChatChunk, toOpenAIChatResponse } from "../../../common/schemas/openai-chat-response.ts";
import { sseData } from "../../../common/schemas/sse.ts";
import type { ChatClient, ChatStreamEncoder } from "../codec.ts";

const EMPTY = Buffer.alloc(0);

export const openaiClient: ChatClient = {
  response: (res) => Buffer.from(JSON.stringify(toOpenAIChatResponse(res))),
  stream: (req) => new OpenAIStreamEncoder(req),
  error: (err) => toErrorResponse(err).body,
};

/**
 * Writes each canonical chunk as one SSE event. The usage-only chunk goes out only when the
 * client asked for it (`stream_options.include_usage`), as OpenAI itself does.
 */
class OpenAIStreamEncoder implements ChatStreamEncoder {
  constructor(private readonly req: ChatRequest) {}

  chunk(chunk: ChatChunk): Buffer {
    if (chunk.choices.length === 0 && chunk.usage && this.req.includeUsage !== true) return EMPTY;
    const out = chunk.usage && this.req.includeUsage !== true ? Object.assign({}, chunk, { usage: undefined }) : chunk;
    return sseData(JSON.stringify(toOpenAIChatChunk(out)));
  }

  end(): Buffer {
    return sseData("[DONE]");
  }

  error(err: GatewayError): Buffer {
    return sseData(toErrorResponse(err).body.toString("utf8"));
  }
}
