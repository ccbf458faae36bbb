/** `POST /v1/embeddings`, OpenAI's Embeddings API. */
import { ok } from "../../common/result.ts";
import { parseOpenAIEmbeddingsRequest } from "../../common/schemas/openai-embeddings.ts";
import { planEmbeddings } from "../translators/select.ts";
import type { EndpointSpec } from "./spec.ts";

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
      plan: (provider, ctx) => planEmbeddings(provider, req, ctx),
    });
  },
};
