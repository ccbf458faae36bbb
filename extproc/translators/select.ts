/**
 * Which translator carries a call: the client's schema × the provider's kind. Every pair is a
 * named module (`<client>-<backend>.ts`); this table only picks one.
 */
import type { ChatRequest, EmbeddingsRequest } from "../../common/canonical/types.ts";
import { GatewayError } from "../../common/errors.ts";
import type { Provider } from "../providers/provider.ts";
import type { JsonObject } from "../../common/schemas/fields.ts";
import { planAnthropicToAnthropic } from "./anthropic-anthropic.ts";
import { planAnthropicToGemini } from "./anthropic-gemini.ts";
import { planAnthropicToOllama } from "./anthropic-ollama.ts";
import { planAnthropicToOpenAI } from "./anthropic-openai.ts";
import type { BackendContext } from "./codec.ts";
import type { CallPlan } from "./compose.ts";
import { planOpenAIToAnthropic } from "./openai-anthropic.ts";
import { planOpenAIToGemini, planOpenAIToGeminiEmbeddings } from "./openai-gemini.ts";
import { planOpenAIToOllama, planOpenAIToOllamaEmbeddings } from "./openai-ollama.ts";
import { openAIRoute, planOpenAIToOpenAIChat, planOpenAIToOpenAIEmbeddings } from "./openai-openai.ts";

export type ClientSchema = "openai" | "anthropic";

export function planChat(client: ClientSchema, provider: Provider, req: ChatRequest, raw: JsonObject, ctx: BackendContext): CallPlan {
  const route = () => openAIRoute("chat/completions", ctx.upstreamModel, provider.params, provider.kind === "azure-openai" ? provider.apiVersion : undefined);
  switch (provider.kind) {
    case "openai":
    case "openai-compatible":
    case "azure-openai":
      return client === "openai" ? planOpenAIToOpenAIChat(req, ctx, route()) : planAnthropicToOpenAI(req, ctx, route());
    case "anthropic":
      return client === "openai" ? planOpenAIToAnthropic(req, ctx) : planAnthropicToAnthropic(raw, req.model, ctx);
    case "gemini":
      return client === "openai" ? planOpenAIToGemini(req, ctx) : planAnthropicToGemini(req, ctx);
    case "ollama":
      return client === "openai" ? planOpenAIToOllama(req, ctx) : planAnthropicToOllama(req, ctx);
    default:
      return provider.kind satisfies never;
  }
}

export function planEmbeddings(provider: Provider, req: EmbeddingsRequest, ctx: BackendContext): CallPlan {
  switch (provider.kind) {
    case "openai":
    case "openai-compatible":
    case "azure-openai":
      return planOpenAIToOpenAIEmbeddings(req, ctx, openAIRoute("embeddings", ctx.upstreamModel, provider.params, provider.kind === "azure-openai" ? provider.apiVersion : undefined));
    case "gemini":
      return planOpenAIToGeminiEmbeddings(req, ctx);
    case "ollama":
      return planOpenAIToOllamaEmbeddings(req, ctx);
    case "anthropic":
      throw new GatewayError(400, "invalid_request_error", `Provider '${provider.name}' (anthropic) has no embeddings API; route this model to another provider.`, {
        param: "model",
        code: "embeddings_unsupported",
      });
    default:
      return provider.kind satisfies never;
  }
}
