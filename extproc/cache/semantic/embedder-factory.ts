/**
 * The semantic cache's parts from `cache.semantic`: the embedder (built-in, edge or provider) and
 * the optional edge verifier. A reference the rest of the config cannot satisfy (an unknown
 * provider, verification without an edge model) is an error that names the field.
 */
import type { EdgeDirectory } from "../../edge/agents.ts";
import type { GatewayConfig } from "../../config/load.ts";
import { fail, ok, type Result } from "../../../common/result.ts";
import { EdgeEmbedder } from "./edge-embedder.ts";
import type { Embedder } from "./embedder.ts";
import { HashedEmbedder } from "./hashed-embedder.ts";
import { ProviderEmbedder } from "./provider-embedder.ts";
import { EdgeVerifier, type Verifier } from "./verifier.ts";

export function createEmbedder(config: GatewayConfig, edges: EdgeDirectory): Result<Embedder> {
  const options = config.cache.semantic.embedder;
  switch (options.kind) {
    case "builtin":
      return ok(new HashedEmbedder());
    case "edge":
      return ok(
        new EdgeEmbedder({
          agents: edges,
          model: options.model ?? "",
          timeoutMs: options.timeout_ms,
          ...(options.dimensions !== undefined && { dimensions: options.dimensions }),
        }),
      );
    case "provider": {
      const provider = config.providers.find((p) => p.name === options.provider);
      if (!provider) return fail(`cache.semantic.embedder.provider: no provider is named '${options.provider ?? ""}'`);
      return ok(
        new ProviderEmbedder({
          provider,
          model: options.model ?? "",
          timeoutMs: options.timeout_ms,
          ...(options.dimensions !== undefined && { dimensions: options.dimensions }),
        }),
      );
    }
    default:
      return options.kind satisfies never;
  }
}

/** The verifier when `cache.semantic.verify.enable`, else `undefined`. */
export function createVerifier(config: GatewayConfig, edges: EdgeDirectory): Result<Verifier | undefined> {
  const options = config.cache.semantic.verify;
  if (!options.enable) return ok(undefined);
  const model = options.model ?? config.edge.default_model;
  if (model === undefined) return fail("cache.semantic.verify.model: verification needs an edge model (or edge.default_model)");
  return ok(new EdgeVerifier({ address: edges, model, timeoutMs: options.timeout_ms, minConfidence: options.min_confidence }));
}
