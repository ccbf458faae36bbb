/** `POST /v1/embeddings`, OpenAI's Embeddings API. */
import type { EmbeddingsRequest } from "../canonical/types.ts";
import type { Provider } from "../providers/provider.ts";
import { ok } from "../result.ts";
import { parseOpenAIEmbeddingsRequest } from "../schemas/openai-embeddings.ts";
import { openaiToOpenAIEmbeddings } from "../translators/openai-openai.ts";
import type { Translator } from "../translators/translator.ts";
import { planWith, type EndpointSpec } from "./spec.ts";

function embeddingsTranslator(provider: Provider): Translator<EmbeddingsRequest> {
  switch (provider.kind) {
    case "openai":
    case "openai-compatible":
      return openaiToOpenAIEmbeddings;
    default:
      return provider.kind satisfies never;
  }
}

export const openaiEmbeddingsEndpoint: EndpointSpec = {
  name: "embeddings",
  path: "/v1/embeddings",
  method: "POST",
  parse(json) {
    const parsed = parseOpenAIEmbeddingsRequest(json);
    if (!parsed.ok) return parsed;
    const req = parsed.value;
    return ok({
      call: { endpoint: "embeddings", request: req },
      model: req.model,
      stream: false,
      plan: (provider, ctx) => planWith(embeddingsTranslator(provider), req, ctx),
    });
  },
};
