/**
 * Embeddings from an edge agent's `/v1/embeddings` (an embedding model the agent serves, e.g. an
 * ONNX sentence encoder), the agent picked per call from an `EdgeDirectory` like edge-routed chat.
 * No agent serving the model, a timeout, an error status or a malformed answer reject with an
 * `EmbeddingError`.
 */
import type { EdgeDirectory } from "../../edge/agents.ts";
import type { Embedder } from "./embedder.ts";
import { EmbeddingError, postEmbeddings } from "./embedder-http.ts";

export interface EdgeEmbedderOptions {
  agents: EdgeDirectory;
  model: string;
  /** The model's vector length, when known (a vector of another length is an error). */
  dimensions?: number;
  timeoutMs: number;
  callerNode?: string;
}

export class EdgeEmbedder implements Embedder {
  readonly name: string;
  private length: number | undefined;

  constructor(private readonly o: EdgeEmbedderOptions) {
    this.name = `edge:${o.model}`;
    this.length = o.dimensions;
  }

  /** The vector length: configured, else learnt from the first answer (0 before it). */
  get dimensions(): number {
    return this.length ?? 0;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const agent = this.o.agents.pick(this.o.model, this.o.callerNode);
    if (agent === undefined) throw new EmbeddingError("embedder_no_agent", `No edge agent serves the embedding model '${this.o.model}'.`);
    const vectors = await postEmbeddings({
      url: new URL(`http://${agent.address}/v1/embeddings`),
      headers: {},
      model: this.o.model,
      texts,
      dimensions: this.length,
      timeoutMs: this.o.timeoutMs,
      ...(signal && { signal }),
    });
    this.length ??= vectors[0]?.length;
    return vectors;
  }
}
