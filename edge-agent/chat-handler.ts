/** Runs one chat request on a loaded model and writes the OpenAI-shaped answer (JSON or SSE). */
import type { ServerResponse } from "node:http";
import type { ChatRequest } from "../common/canonical/types.ts";
import { GatewayError, toErrorResponse } from "../common/errors.ts";
import { toOpenAIChatChunk, toOpenAIChatResponse, usageToOpenAI } from "../common/schemas/openai-chat-response.ts";
import { sseData } from "../common/schemas/sse.ts";
import { logprobEntry, newCompletion, planGeneration, toTurns } from "./chat.ts";
import { CONFIDENCE_HEADER, ConfidenceMeter, confidenceField } from "./confidence.ts";
import { EngineError } from "./engines/engine.ts";
import type { AgentMetrics } from "./metrics.ts";
import type { ModelEntry } from "./registry.ts";

export interface ChatOutcome {
  status: number;
  completionTokens: number;
  /** For the request's span (tracing). */
  promptTokens?: number;
  confidence?: number;
  finishReason?: string;
}

function engineFailure(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const message = err instanceof EngineError ? `The edge engine failed: ${err.message}` : "The edge engine failed.";
  const status = err instanceof EngineError && err.code === "unavailable" ? 503 : 500;
  return new GatewayError(status, "server_error", message, { code: err instanceof EngineError ? `engine_${err.code}` : "engine_error", cause: err });
}

export async function handleChat(entry: ModelEntry, req: ChatRequest, res: ServerResponse, signal: AbortSignal, metrics: AgentMetrics, started: number): Promise<ChatOutcome> {
  const turns = toTurns(req);
  const params = await planGeneration(entry.model, req, turns, signal);
  const release = await entry.capacity.acquire(signal);
  const model = entry.spec.id;
  metrics.inflight.set({ model }, entry.capacity.inflight);
  metrics.queued.set({ model }, entry.capacity.queued);
  try {
    return req.stream ? await streamChat(entry, req, params, res, metrics, started) : await completeChat(entry, req, params, res, metrics, started);
  } finally {
    release();
    metrics.inflight.set({ model }, entry.capacity.inflight);
    metrics.queued.set({ model }, entry.capacity.queued);
  }
}

type Params = Awaited<ReturnType<typeof planGeneration>>;

async function completeChat(entry: ModelEntry, req: ChatRequest, params: Params, res: ServerResponse, metrics: AgentMetrics, started: number): Promise<ChatOutcome> {
  const meter = new ConfidenceMeter();
  const logprobs: NonNullable<ReturnType<typeof logprobEntry>>[] = [];
  let text = "";
  let finish: "stop" | "length" = "stop";
  let usage = { prompt: 0, completion: 0 };
  let first = true;
  try {
    for await (const event of entry.model.chat(params)) {
      if (event.type === "done") {
        finish = event.finishReason;
        usage = { prompt: event.promptTokens, completion: event.completionTokens };
        continue;
      }
      if (first) metrics.ttft.observe({ model: entry.spec.id }, (performance.now() - started) / 1000);
      first = false;
      text += event.text;
      meter.add(event.logprob);
      const scored = req.logprobs ? logprobEntry(event.text, event.logprob, event.bytes, event.topLogprobs) : undefined;
      if (scored) logprobs.push(scored);
    }
  } catch (err) {
    throw engineFailure(err);
  }
  const confidence = meter.result();
  const body = Buffer.from(
    JSON.stringify(
      toOpenAIChatResponse({
        ...newCompletion(entry.spec.id),
        choices: [{ index: 0, message: { role: "assistant", content: text }, finishReason: finish, ...(req.logprobs && logprobs.length > 0 && { logprobs: { content: logprobs, refusal: null } }) }],
        usage: { inputTokens: usage.prompt, outputTokens: usage.completion, totalTokens: usage.prompt + usage.completion },
        extra: confidenceField(confidence),
      }),
    ),
  );
  const headers: Record<string, string> = { "content-type": "application/json", "content-length": String(body.length) };
  if (confidence) headers[CONFIDENCE_HEADER] = confidence.score.toFixed(6);
  res.writeHead(200, headers);
  res.end(body);
  record(metrics, entry.spec.id, usage, confidence?.score);
  return { status: 200, completionTokens: usage.completion, promptTokens: usage.prompt, finishReason: finish, ...(confidence && { confidence: confidence.score }) };
}

async function streamChat(entry: ModelEntry, req: ChatRequest, params: Params, res: ServerResponse, metrics: AgentMetrics, started: number): Promise<ChatOutcome> {
  const meter = new ConfidenceMeter();
  const head = newCompletion(entry.spec.id);
  const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) => sseData(JSON.stringify({ ...toOpenAIChatChunk({ ...head, choices: [], extra: {} }), ...extra, choices: [delta] }));
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  res.write(chunk({ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }));
  let usage = { prompt: 0, completion: 0 };
  let finish: "stop" | "length" = "stop";
  let first = true;
  try {
    for await (const event of entry.model.chat(params)) {
      if (event.type === "done") {
        finish = event.finishReason;
        usage = { prompt: event.promptTokens, completion: event.completionTokens };
        continue;
      }
      if (first) metrics.ttft.observe({ model: entry.spec.id }, (performance.now() - started) / 1000);
      first = false;
      meter.add(event.logprob);
      if (event.text === "" && !req.logprobs) continue;
      const scored = req.logprobs ? logprobEntry(event.text, event.logprob, event.bytes, event.topLogprobs) : undefined;
      const logprobs = scored ? { content: [scored], refusal: null } : null;
      res.write(chunk({ index: 0, delta: { content: event.text }, logprobs, finish_reason: null }));
    }
  } catch (err) {
    if (params.signal.aborted) return { status: 499, completionTokens: usage.completion };
    // Headers are out: the failure goes in-band, once, and the stream ends cleanly.
    res.end(sseData(toErrorResponse(engineFailure(err)).body.toString("utf8")));
    return { status: 500, completionTokens: usage.completion };
  }
  const confidence = meter.result();
  res.write(chunk({ index: 0, delta: {}, logprobs: null, finish_reason: finish }, confidenceField(confidence)));
  if (req.includeUsage) {
    const total = { inputTokens: usage.prompt, outputTokens: usage.completion, totalTokens: usage.prompt + usage.completion };
    res.write(sseData(JSON.stringify({ ...toOpenAIChatChunk({ ...head, choices: [], extra: {} }), usage: usageToOpenAI(total) })));
  }
  res.end(sseData("[DONE]"));
  record(metrics, entry.spec.id, usage, confidence?.score);
  return { status: 200, completionTokens: usage.completion, promptTokens: usage.prompt, finishReason: finish, ...(confidence && { confidence: confidence.score }) };
}

function record(metrics: AgentMetrics, model: string, usage: { prompt: number; completion: number }, confidence: number | undefined): void {
  metrics.tokens.inc({ model }, usage.completion);
  metrics.promptTokens.inc({ model }, usage.prompt);
  if (confidence !== undefined) metrics.confidence.observe({ model }, confidence);
}
