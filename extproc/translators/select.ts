/**
 * Which translator carries a call: the client's schema × the protocol the provider's kind speaks.
 * Every pair is a named module (`<client>-<backend>.ts`); the typed tables below only pick one,
 * so a client schema or provider kind without an entry fails to compile, and one that reaches
 * here anyway at run time throws instead of taking another API's branch.
 */
import type { ChatRequest, EmbeddingsRequest } from "../../common/canonical/types.ts";
import { GatewayError, unreachable } from "../../common/errors.ts";
import type { Provider, ProviderKind } from "../providers/provider.ts";
import type { JsonObject } from "../../common/schemas/fields.ts";
import { planAnthropicToAnthropic } from "./anthropic-anthropic.ts";
import { planAnthropicToGemini } from "./anthropic-gemini.ts";
import { planAnthropicToOllama } from "./anthropic-ollama.ts";
import { planAnthropicToOpenAI } from "./anthropic-openai.ts";
import { planGeminiToAnthropic, planGeminiToGemini, planGeminiToOllama, planGeminiToOpenAI } from "./gemini-backends.ts";
import type { BackendContext } from "./codec.ts";
import type { CallPlan } from "./compose.ts";
import { planOpenAIToAnthropic } from "./openai-anthropic.ts";
import { planOpenAIToGemini, planOpenAIToGeminiEmbeddings } from "./openai-gemini.ts";
import { planOpenAIToOllama, planOpenAIToOllamaEmbeddings } from "./openai-ollama.ts";
import { openAIRoute, planOpenAIToOpenAIChat, planOpenAIToOpenAIEmbeddings, type OpenAIRoute } from "./openai-openai.ts";
import { planResponsesToAnthropic, planResponsesToGemini, planResponsesToOllama, planResponsesToOpenAI } from "./responses-backends.ts";
import type { ChatClient } from "./codec.ts";

export type ClientSchema = "openai" | "anthropic" | "gemini";

/** The API a provider speaks: every OpenAI-compatible kind (Azure included) speaks OpenAI's. */
export type BackendProtocol = "openai" | "anthropic" | "gemini" | "ollama";

export function backendProtocol(kind: ProviderKind): BackendProtocol {
  switch (kind) {
    case "openai":
    case "openai-compatible":
    case "azure-openai":
      return "openai";
    case "anthropic":
    case "gemini":
    case "ollama":
      return kind;
    default:
      return unreachable(kind, "provider kind");
  }
}

/** What a chat translator is given; `raw` is the client's body, for the byte-preserving pairs. */
interface ChatCall {
  provider: Provider;
  req: ChatRequest;
  raw: JsonObject;
  ctx: BackendContext;
}

type ChatPlanner = (call: ChatCall) => CallPlan;

function openAIPath(operation: "chat/completions" | "embeddings", provider: Provider, ctx: BackendContext): OpenAIRoute {
  return openAIRoute(operation, ctx.upstreamModel, provider.params, provider.kind === "azure-openai" ? provider.apiVersion : undefined);
}

const FROM_OPENAI: Readonly<Record<BackendProtocol, ChatPlanner>> = {
  openai: (c) => planOpenAIToOpenAIChat(c.req, c.raw, c.ctx, openAIPath("chat/completions", c.provider, c.ctx)),
  anthropic: (c) => planOpenAIToAnthropic(c.req, c.ctx),
  gemini: (c) => planOpenAIToGemini(c.req, c.ctx),
  ollama: (c) => planOpenAIToOllama(c.req, c.ctx),
};

const FROM_ANTHROPIC: Readonly<Record<BackendProtocol, ChatPlanner>> = {
  openai: (c) => planAnthropicToOpenAI(c.req, c.ctx, openAIPath("chat/completions", c.provider, c.ctx)),
  anthropic: (c) => planAnthropicToAnthropic(c.raw, c.req.model, c.ctx),
  gemini: (c) => planAnthropicToGemini(c.req, c.ctx),
  ollama: (c) => planAnthropicToOllama(c.req, c.ctx),
};

const FROM_GEMINI: Readonly<Record<BackendProtocol, ChatPlanner>> = {
  openai: (c) => planGeminiToOpenAI(c.req, c.ctx, openAIPath("chat/completions", c.provider, c.ctx)),
  anthropic: (c) => planGeminiToAnthropic(c.req, c.ctx),
  gemini: (c) => planGeminiToGemini(c.req, c.ctx),
  ollama: (c) => planGeminiToOllama(c.req, c.ctx),
};

/** The translators an API's clients can reach, one per backend protocol. */
function chatTranslators(client: ClientSchema): Readonly<Record<BackendProtocol, ChatPlanner>> {
  switch (client) {
    case "openai":
      return FROM_OPENAI;
    case "anthropic":
      return FROM_ANTHROPIC;
    case "gemini":
      return FROM_GEMINI;
    default:
      return unreachable(client, "client schema");
  }
}

export function planChat(client: ClientSchema, provider: Provider, req: ChatRequest, raw: JsonObject, ctx: BackendContext): CallPlan {
  const plan = chatTranslators(client)[backendProtocol(provider.kind)];
  return plan({ provider, req, raw, ctx });
}

type ResponsesPlanner = (client: ChatClient, c: Omit<ChatCall, "raw">) => CallPlan;

/** OpenAI Responses clients: the client codec is per call (it holds the response id and the store hook). */
const FROM_RESPONSES: Readonly<Record<BackendProtocol, ResponsesPlanner>> = {
  openai: (client, c) => planResponsesToOpenAI(client, c.req, c.ctx, openAIPath("chat/completions", c.provider, c.ctx)),
  anthropic: (client, c) => planResponsesToAnthropic(client, c.req, c.ctx),
  gemini: (client, c) => planResponsesToGemini(client, c.req, c.ctx),
  ollama: (client, c) => planResponsesToOllama(client, c.req, c.ctx),
};

export function planResponses(client: ChatClient, provider: Provider, req: ChatRequest, ctx: BackendContext): CallPlan {
  return FROM_RESPONSES[backendProtocol(provider.kind)](client, { provider, req, ctx });
}

export function planEmbeddings(provider: Provider, req: EmbeddingsRequest, ctx: BackendContext): CallPlan {
  const protocol = backendProtocol(provider.kind);
  switch (protocol) {
    case "openai":
      return planOpenAIToOpenAIEmbeddings(req, ctx, openAIPath("embeddings", provider, ctx));
    case "gemini":
      return planOpenAIToGeminiEmbeddings(req, ctx);
    case "ollama":
      return planOpenAIToOllamaEmbeddings(req, ctx);
    case "anthropic":
      throw new GatewayError(
        400,
        "invalid_request_error",
        `Provider '${provider.name}' (anthropic) has no embeddings API; route this model to another provider.`,
        {
          param: "model",
          code: "embeddings_unsupported",
        },
      );
    default:
      return unreachable(protocol, "backend protocol");
  }
}
