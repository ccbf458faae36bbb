/**
 * `/v1/chat/completions` on the edge agent: the gateway's own OpenAI parser validates the body;
 * the model generates through its engine; the answer goes back in OpenAI's shape with per-token
 * logprobs (when asked) and a confidence summary (header and body) for Gearbox's upgrade check.
 */
import { randomUUID } from "node:crypto";
import type { ChatRequest, ChatResponse } from "../common/canonical/types.ts";
import { GatewayError, invalidRequest } from "../common/errors.ts";
import type { ChatParams, ChatTurn, LoadedModel } from "./engines/engine.ts";

/** Tokens generated when the request sets no limit (bounded by the context left). */
export const DEFAULT_MAX_TOKENS = 512;

/** Canonical messages → engine turns; edge models take text only and no tools. */
export function toTurns(req: ChatRequest): ChatTurn[] {
  if (req.tools && req.tools.length > 0) {
    throw invalidRequest("Tool calling is off on edge models; send tool calls to a cloud model (x-gearbox-route: cloud).", "tools", "tools_unsupported");
  }
  if ((req.n ?? 1) > 1) throw invalidRequest("Edge models generate one choice per request ('n' must be 1).", "n", "unsupported_parameter");
  if (req.responseFormat && req.responseFormat.type !== "text") {
    throw invalidRequest("Edge models do not enforce JSON output; send this request to a cloud model.", "response_format", "unsupported_parameter");
  }
  return req.messages.map((m, i): ChatTurn => {
    const text = (content: unknown, field: string): string => {
      if (typeof content === "string") return content;
      if (content === null) return "";
      if (Array.isArray(content)) {
        return content
          .map((p: { type: string; text?: string }, j) => {
            if (p.type !== "text") throw invalidRequest("Edge models take text only.", `messages[${i}].${field}[${j}]`, "unsupported_content");
            return p.text ?? "";
          })
          .join("");
      }
      return "";
    };
    switch (m.role) {
      case "system":
      case "developer":
        return { role: "system", content: text(m.content, "content") };
      case "user":
        return { role: "user", content: text(m.content, "content") };
      case "assistant":
        if (m.toolCalls?.length) throw invalidRequest("Tool calling is off on edge models.", `messages[${i}].tool_calls`, "tools_unsupported");
        return { role: "assistant", content: text(m.content, "content") };
      case "tool":
        throw invalidRequest("Tool results cannot go to edge models.", `messages[${i}]`, "tools_unsupported");
      default:
        return m satisfies never;
    }
  });
}

/** Checks the prompt fits, and picks max tokens; OpenAI's wording for an overflow. */
export async function planGeneration(model: LoadedModel, req: ChatRequest, turns: ChatTurn[], signal: AbortSignal): Promise<ChatParams> {
  const limit = model.info().contextLength;
  const promptTokens = await model.countTokens(turns);
  const requested = req.maxTokens ?? Math.min(DEFAULT_MAX_TOKENS, Math.max(1, limit - promptTokens));
  if (promptTokens + requested > limit) {
    throw new GatewayError(
      400,
      "invalid_request_error",
      `This model's maximum context length is ${limit} tokens. However, you requested ${promptTokens + requested} tokens (${promptTokens} in the messages, ${requested} in the completion). Please reduce the length of the messages or completion.`,
      { param: "messages", code: "context_length_exceeded" },
    );
  }
  const params: ChatParams = {
    messages: turns,
    maxTokens: requested,
    temperature: req.temperature ?? 1,
    topLogprobs: req.logprobs ? (req.topLogprobs ?? 0) : 0,
    signal,
  };
  if (req.topP !== undefined) params.topP = req.topP;
  if (req.stop) params.stop = req.stop;
  if (req.seed !== undefined) params.seed = req.seed;
  return params;
}

/**
 * The OpenAI `logprobs.content[]` entry for one token, or undefined when the engine could not
 * score it (an Ollama server older than 0.12.11): no invented number stands in for it.
 */
export function logprobEntry(text: string, logprob: number, bytes: number[], top: { token: string; logprob: number }[]) {
  if (!Number.isFinite(logprob)) return undefined;
  return {
    token: text,
    logprob,
    bytes,
    top_logprobs: top.map((t) => ({ token: t.token, logprob: t.logprob, bytes: tokenBytes(t.token) })),
  };
}

export function newCompletion(model: string): Pick<ChatResponse, "id" | "created" | "model"> {
  return { id: `chatcmpl-edge-${randomUUID()}`, created: Math.floor(Date.now() / 1000), model };
}

/** A token's bytes; a partial UTF-8 token is spelt `bytes:\\xNN…` (OpenAI's convention). */
function tokenBytes(token: string): number[] {
  const partial = /^bytes:((?:\\x[0-9a-fA-F]{2})+)$/.exec(token);
  if (partial?.[1])
    return partial[1]
      .split("\\x")
      .filter(Boolean)
      .map((h) => parseInt(h, 16));
  return [...Buffer.from(token, "utf8")];
}
