/**
 * Anthropic-speaking client → Anthropic backend: the client's bytes go upstream unchanged (but
 * for the model name), so everything Anthropic-only (cache_control, thinking, server tools)
 * survives; the backend codec only reads usage on the way back. The client's `anthropic-version`
 * and `anthropic-beta` headers go upstream as sent (Gearbox sets neither: the beta features a
 * body uses need the client's own), as a direct call to Anthropic would.
 */
import type { Usage } from "../../common/canonical/types.ts";
import type { JsonObject } from "../../common/schemas/fields.ts";
import { anthropicBackend } from "./backends/anthropic.ts";
import { ANTHROPIC_MESSAGES_PATH } from "./backends/anthropic-wire.ts";
import type { BackendContext } from "./codec.ts";
import type { CallPlan } from "./compose.ts";
import type { StreamTranslator, TranslatedChunk } from "./translator.ts";

export function planAnthropicToAnthropic(raw: JsonObject, model: string, ctx: BackendContext): CallPlan {
  const headers = { "content-type": "application/json" };
  const body = model === ctx.upstreamModel ? undefined : Buffer.from(JSON.stringify(Object.assign({}, raw, { model: ctx.upstreamModel })));
  return {
    upstream: body ? { path: ANTHROPIC_MESSAGES_PATH, headers, body } : { path: ANTHROPIC_MESSAGES_PATH, headers },
    response(status, headers, bytes) {
      if (status >= 400) return { error: { error: anthropicBackend.error(status, headers, bytes), clientShaped: true } };
      const decoded = anthropicBackend.response(bytes, headers, ctx);
      return decoded.ok && decoded.value.usage ? { usage: decoded.value.usage } : {};
    },
    stream: () => new UsageReader(ctx),
  };
}

/** Passes stream bytes through untouched, reading usage with the backend's decoder. */
class UsageReader implements StreamTranslator {
  private readonly decoder;
  private usage: Usage | undefined;
  private broken = false;

  constructor(ctx: BackendContext) {
    this.decoder = anthropicBackend.stream(ctx);
  }

  push(chunk: Buffer): TranslatedChunk {
    return this.read(() => this.decoder.push(chunk));
  }

  end(): TranslatedChunk {
    return this.read(() => this.decoder.end());
  }

  private read(decode: () => { usage?: Usage | null }[]): TranslatedChunk {
    if (!this.broken) {
      try {
        for (const c of decode()) if (c.usage) this.usage = c.usage;
      } catch {
        // The client parses the stream itself and sees the same fault; Gearbox stops reading.
        this.broken = true;
      }
    }
    return this.usage ? { usage: this.usage } : {};
  }
}
