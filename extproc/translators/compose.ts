/**
 * Joins a client codec and a backend codec into one request's plan: the upstream request, and
 * the response/stream handling that decodes the backend into canonical and encodes it for the
 * client. A malformed or failing upstream stream ends in one clean in-band error event.
 */
import type { ChatChunk, ChatRequest, EmbeddingsRequest, Usage } from "../../common/canonical/types.ts";
import { GatewayError, toErrorResponse } from "../../common/errors.ts";
import { float32Base64, toOpenAIEmbeddingsResponse } from "../../common/schemas/openai-embeddings.ts";
import type { BackendContext, ChatBackend, ChatClient, EmbeddingsBackend } from "./codec.ts";
import type { StreamTranslator, TranslatedChunk, TranslatedResponse, UpstreamRequest } from "./translator.ts";

/** What the processor needs for one call, whatever the client and backend schemas. */
export interface CallPlan {
  upstream: UpstreamRequest;
  response(status: number, headers: Record<string, string>, body: Buffer): TranslatedResponse;
  stream(status: number, headers: Record<string, string>): StreamTranslator;
}

const EMPTY = Buffer.alloc(0);

function asGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return new GatewayError(502, "upstream_error", "The upstream response could not be translated.", { code: "translation_failed", cause: err });
}

function errorResponse(client: Pick<ChatClient, "error">, err: GatewayError): TranslatedResponse {
  return { body: client.error(err), status: err.status, error: { error: err, clientShaped: true } };
}

export function composeChat(client: ChatClient, backend: ChatBackend, req: ChatRequest, ctx: BackendContext): CallPlan {
  return {
    upstream: backend.request(req, ctx),
    response(status, headers, body) {
      if (status >= 400) return errorResponse(client, backend.error(status, headers, body));
      const decoded = backend.response(body, headers, ctx);
      if (!decoded.ok) return errorResponse(client, decoded.errors[0] ?? asGatewayError(undefined));
      const out: TranslatedResponse = { body: client.response(decoded.value, req) };
      if (decoded.value.usage) out.usage = decoded.value.usage;
      return out;
    },
    stream: () => new ComposedStream(client, backend, req, ctx),
  };
}

class ComposedStream implements StreamTranslator {
  private readonly decoder;
  private readonly encoder;
  private usage: Usage | undefined;
  private failed = false;

  constructor(client: ChatClient, backend: ChatBackend, req: ChatRequest, ctx: BackendContext) {
    this.decoder = backend.stream(ctx);
    this.encoder = client.stream(req);
  }

  push(chunk: Buffer): TranslatedChunk {
    if (this.failed) return { body: EMPTY };
    return this.run(() => this.decoder.push(chunk), false);
  }

  end(): TranslatedChunk {
    if (this.failed) return { body: EMPTY };
    return this.run(() => this.decoder.end(), true);
  }

  private run(decode: () => ChatChunk[], last: boolean): TranslatedChunk {
    const parts: Buffer[] = [];
    try {
      for (const c of decode()) {
        if (c.usage) this.usage = c.usage;
        parts.push(this.encoder.chunk(c));
      }
      if (last) parts.push(this.encoder.end());
    } catch (err) {
      this.failed = true;
      parts.push(this.encoder.error(asGatewayError(err)));
    }
    const out: TranslatedChunk = { body: parts.length === 1 ? (parts[0] ?? EMPTY) : Buffer.concat(parts) };
    if (this.usage) out.usage = this.usage;
    return out;
  }
}

/** Embeddings for OpenAI-speaking clients on any embeddings backend. */
export function composeEmbeddings(backend: EmbeddingsBackend, req: EmbeddingsRequest, ctx: BackendContext): CallPlan {
  const openaiError = { error: (err: GatewayError) => toErrorResponse(err).body };
  return {
    upstream: backend.request(req, ctx),
    response(status, headers, body) {
      if (status >= 400) return errorResponse(openaiError, backend.error(status, headers, body));
      const decoded = backend.response(body, headers, ctx);
      if (!decoded.ok) return errorResponse(openaiError, decoded.errors[0] ?? asGatewayError(undefined));
      const res = Object.assign({}, decoded.value, { model: decoded.value.model || req.model });
      // Backends decode floats; OpenAI clients (the SDK by default) may ask for base64 float32.
      if (req.encodingFormat === "base64")
        res.data = res.data.map((d) => Object.assign({}, d, { embedding: typeof d.embedding === "string" ? d.embedding : float32Base64(d.embedding) }));
      const out: TranslatedResponse = { body: Buffer.from(JSON.stringify(toOpenAIEmbeddingsResponse(res))) };
      if (res.usage) out.usage = res.usage;
      return out;
    },
    stream: () => {
      throw new GatewayError(500, "server_error", "Embeddings are never streamed.");
    },
  };
}
