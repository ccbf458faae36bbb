/**
 * Embeddings from a provider's OpenAI-compatible `…/embeddings` (OpenAI, DashScope, Mistral, a
 * local Ollama's `/v1`…), at the provider's configured base URL with its credential. Failures
 * reject with an `EmbeddingError`.
 */
import { authHeaders, type Provider } from "../../providers/provider.ts";
import type { Embedder } from "./embedder.ts";
import { postEmbeddings } from "./embedder-http.ts";

export interface ProviderEmbedderOptions {
  provider: Provider;
  model: string;
  dimensions?: number;
  timeoutMs: number;
}

export class ProviderEmbedder implements Embedder {
  readonly name: string;
  private length: number | undefined;
  private readonly url: URL;

  constructor(private readonly o: ProviderEmbedderOptions) {
    this.name = `provider:${o.provider.name}:${o.model}`;
    this.length = o.dimensions;
    this.url = new URL(`${o.provider.basePath}/embeddings`, o.provider.baseUrl.origin);
  }

  /** The vector length: configured, else learnt from the first answer (0 before it). */
  get dimensions(): number {
    return this.length ?? 0;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const model = this.o.provider.aliases.get(this.o.model) ?? this.o.model;
    const vectors = await postEmbeddings({
      url: this.url,
      headers: authHeaders(this.o.provider),
      model,
      texts,
      dimensions: this.length,
      timeoutMs: this.o.timeoutMs,
      ...(signal && { signal }),
    });
    this.length ??= vectors[0]?.length;
    return vectors;
  }
}
