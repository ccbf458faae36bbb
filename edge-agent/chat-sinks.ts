/**
 * Where a chat's generated tokens go: one engine loop (`chat-handler.ts`) feeds a sink, and the
 * sink alone knows the wire shape. `jsonSink` accumulates one OpenAI chat completion and writes
 * it at the end; `sseSink` writes OpenAI chat chunks as the tokens come, and reports a failure
 * after the headers in-band, once.
 */
import type { ServerResponse } from "node:http";
import type { ChatRequest } from "../common/canonical/types.ts";
import { GatewayError, toErrorResponse } from "../common/errors.ts";
import { toOpenAIChatChunk, toOpenAIChatResponse, usageToOpenAI } from "../common/schemas/openai-chat-response.ts";
import { sseData } from "../common/schemas/sse.ts";
import { type logprobEntry, newCompletion } from "./chat.ts";
import { type Confidence, CONFIDENCE_HEADER, confidenceField } from "./confidence.ts";
import { EngineError } from "./engines/engine.ts";

/** One scored token, as OpenAI's `logprobs.content[]` spells it. */
export type ScoredToken = NonNullable<ReturnType<typeof logprobEntry>>;

/** Token counts the engine reported when it finished. */
export interface GenerationUsage {
  prompt: number;
  completion: number;
}

/** What the generation ended with, handed to the sink once. */
export interface GenerationEnd {
  finish: "stop" | "length";
  usage: GenerationUsage;
  confidence: Confidence | undefined;
}

/** How a sink settles an engine failure: an answer status, or a thrown `GatewayError`. */
export interface FailureOutcome {
  status: number;
}

/** The wire side of one chat answer. */
export interface ChatSink {
  /** Before the engine starts (a stream sends its headers and role chunk here). */
  open(): void;
  /** One generated token, with its score when the request asked for logprobs. */
  token(text: string, scored: ScoredToken | undefined): void;
  /** The engine finished: write the rest of the answer. */
  close(end: GenerationEnd): void;
  /** The engine failed: throws the error to answer with, or ends the answer and returns its status. */
  fail(err: unknown): FailureOutcome;
}

/** An engine failure as the error the client sees. */
function engineFailure(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const message = err instanceof EngineError ? `The edge engine failed: ${err.message}` : "The edge engine failed.";
  const status = err instanceof EngineError && err.code === "unavailable" ? 503 : 500;
  return new GatewayError(status, "server_error", message, { code: err instanceof EngineError ? `engine_${err.code}` : "engine_error", cause: err });
}

/** Accumulates the text (and scored tokens) and answers with one `application/json` completion. */
export function jsonSink(model: string, req: ChatRequest, res: ServerResponse): ChatSink {
  const logprobs: ScoredToken[] = [];
  let text = "";
  return {
    open() {},
    token(piece, scored) {
      text += piece;
      if (scored) logprobs.push(scored);
    },
    close({ finish, usage, confidence }) {
      const body = Buffer.from(
        JSON.stringify(
          toOpenAIChatResponse({
            ...newCompletion(model),
            choices: [
              {
                index: 0,
                message: { role: "assistant", content: text },
                finishReason: finish,
                ...(req.logprobs && logprobs.length > 0 && { logprobs: { content: logprobs, refusal: null } }),
              },
            ],
            usage: { inputTokens: usage.prompt, outputTokens: usage.completion, totalTokens: usage.prompt + usage.completion },
            extra: confidenceField(confidence),
          }),
        ),
      );
      const headers: Record<string, string> = { "content-type": "application/json", "content-length": String(body.length) };
      if (confidence) headers[CONFIDENCE_HEADER] = confidence.score.toFixed(6);
      res.writeHead(200, headers);
      res.end(body);
    },
    fail(err) {
      throw engineFailure(err);
    },
  };
}

/** Writes `text/event-stream` chat chunks as tokens come; a failure after the headers goes in-band. */
export function sseSink(model: string, req: ChatRequest, res: ServerResponse, signal: AbortSignal): ChatSink {
  const head = newCompletion(model);
  const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    sseData(JSON.stringify({ ...toOpenAIChatChunk({ ...head, choices: [], extra: {} }), ...extra, choices: [delta] }));
  return {
    open() {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
      res.write(chunk({ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }));
    },
    token(piece, scored) {
      if (piece === "" && !req.logprobs) return;
      const logprobs = scored ? { content: [scored], refusal: null } : null;
      res.write(chunk({ index: 0, delta: { content: piece }, logprobs, finish_reason: null }));
    },
    close({ finish, usage, confidence }) {
      res.write(chunk({ index: 0, delta: {}, logprobs: null, finish_reason: finish }, confidenceField(confidence)));
      if (req.includeUsage) {
        const total = { inputTokens: usage.prompt, outputTokens: usage.completion, totalTokens: usage.prompt + usage.completion };
        res.write(sseData(JSON.stringify({ ...toOpenAIChatChunk({ ...head, choices: [], extra: {} }), usage: usageToOpenAI(total) })));
      }
      res.end(sseData("[DONE]"));
    },
    fail(err) {
      if (signal.aborted) return { status: 499 };
      // Headers are out: the failure goes in-band, once, and the stream ends cleanly.
      res.end(sseData(toErrorResponse(engineFailure(err)).body.toString("utf8")));
      return { status: 500 };
    },
  };
}
