/**
 * Runs one chat request on a loaded model: one loop over the engine's events feeds a sink that
 * writes the OpenAI-shaped answer (`jsonSink` or `sseSink`, in `chat-sinks.ts`).
 */
import type { ServerResponse } from "node:http";
import type { ChatRequest } from "../common/canonical/types.ts";
import { logprobEntry, planGeneration, toTurns } from "./chat.ts";
import { type ChatSink, type GenerationUsage, jsonSink, sseSink } from "./chat-sinks.ts";
import { ConfidenceMeter } from "./confidence.ts";
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

export async function handleChat(
  entry: ModelEntry,
  req: ChatRequest,
  res: ServerResponse,
  signal: AbortSignal,
  metrics: AgentMetrics,
  started: number,
): Promise<ChatOutcome> {
  const turns = toTurns(req);
  const params = await planGeneration(entry.model, req, turns, signal);
  const release = await entry.capacity.acquire(signal);
  const model = entry.spec.id;
  metrics.inflight.set({ model }, entry.capacity.inflight);
  metrics.queued.set({ model }, entry.capacity.queued);
  try {
    const sink = req.stream ? sseSink(model, req, res, params.signal) : jsonSink(model, req, res);
    return await generate(entry, req, params, sink, metrics, started);
  } finally {
    release();
    metrics.inflight.set({ model }, entry.capacity.inflight);
    metrics.queued.set({ model }, entry.capacity.queued);
  }
}

type Params = Awaited<ReturnType<typeof planGeneration>>;

/** The one engine loop: time to first token, confidence, logprobs, usage; the sink writes. */
async function generate(entry: ModelEntry, req: ChatRequest, params: Params, sink: ChatSink, metrics: AgentMetrics, started: number): Promise<ChatOutcome> {
  const meter = new ConfidenceMeter();
  let usage: GenerationUsage = { prompt: 0, completion: 0 };
  let finish: "stop" | "length" = "stop";
  let first = true;
  sink.open();
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
      sink.token(event.text, req.logprobs ? logprobEntry(event.text, event.logprob, event.bytes, event.topLogprobs) : undefined);
    }
  } catch (err) {
    return { status: sink.fail(err).status, completionTokens: usage.completion };
  }
  const confidence = meter.result();
  sink.close({ finish, usage, confidence });
  record(metrics, entry.spec.id, usage, confidence?.score);
  return {
    status: 200,
    completionTokens: usage.completion,
    promptTokens: usage.prompt,
    finishReason: finish,
    ...(confidence && { confidence: confidence.score }),
  };
}

function record(metrics: AgentMetrics, model: string, usage: GenerationUsage, confidence: number | undefined): void {
  metrics.tokens.inc({ model }, usage.completion);
  metrics.promptTokens.inc({ model }, usage.prompt);
  if (confidence !== undefined) metrics.confidence.observe({ model }, confidence);
}
