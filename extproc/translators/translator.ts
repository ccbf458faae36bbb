/**
 * A translator carries one endpoint's traffic from a client schema to a backend schema and back
 * (`openai-openai.ts`: an OpenAI-speaking client served by an OpenAI-compatible backend). It sees
 * canonical requests, bytes and plain headers — never Envoy or gRPC types — and returns objects.
 */
import type { Usage } from "../canonical/types.ts";
import type { GatewayError } from "../errors.ts";

export type Headers = Record<string, string>;

/** What to send upstream. `body: undefined` means "the client's bytes, unchanged". */
export interface UpstreamRequest {
  /** Path below the provider's base path, e.g. `/chat/completions`. */
  path: string;
  headers: Headers;
  body?: Buffer;
}

/** A translated (non-streaming) response. `body: undefined` means "unchanged". */
export interface TranslatedResponse {
  body?: Buffer;
  usage?: Usage;
  /**
   * The upstream answered with an error. `clientShaped`: its body already is what the client's
   * schema expects (keep it); otherwise the processor replaces it with the shaped error.
   */
  error?: { error: GatewayError; clientShaped: boolean };
}

/** A translated slice of a stream. `body: undefined` means "pass the chunk unchanged". */
export interface TranslatedChunk {
  body?: Buffer;
  usage?: Usage;
}

/** Per-request stream state: upstream chunks in, client chunks out. */
export interface StreamTranslator {
  push(chunk: Buffer): TranslatedChunk;
  end(): TranslatedChunk;
}

export interface Translator<Req> {
  request(req: Req, context: TranslateContext): UpstreamRequest;
  response(status: number, headers: Headers, body: Buffer): TranslatedResponse;
  stream(status: number, headers: Headers): StreamTranslator;
}

export interface TranslateContext {
  /** The model name the backend knows (after routing/aliasing). */
  upstreamModel: string;
  /** Gearbox needs usage on streams (cost accounting): force it upstream if the client did not ask. */
  forceStreamUsage: boolean;
}
