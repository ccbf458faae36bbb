/**
 * What translators hand the processor: the upstream request, translated responses and stream
 * slices. Translators see canonical requests, bytes and plain headers — never Envoy or gRPC
 * types — and return objects. `compose.ts` builds them from codecs; `openai-openai.ts` and
 * `anthropic-anthropic.ts` are the byte-preserving same-schema paths.
 */
import type { Usage } from "../../common/canonical/types.ts";
import type { GatewayError } from "../../common/errors.ts";

export type Headers = Record<string, string>;

/** What to send upstream. `body: undefined` means "the client's bytes, unchanged". */
export interface UpstreamRequest {
  /** Path below the provider's base path, query string allowed, e.g. `/chat/completions`. */
  path: string;
  headers: Headers;
  body?: Buffer;
}

/** A translated (non-streaming) response. `body: undefined` means "unchanged". */
export interface TranslatedResponse {
  body?: Buffer;
  /** The status the client should see, when it differs from the upstream's. */
  status?: number;
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
