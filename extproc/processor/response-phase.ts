/**
 * The response phases. An edge call: the cascade's verdict on the complete answer (pass it on,
 * or the cloud's in its place). A cloud call: Gearbox's headers on the provider's screened ones;
 * a stream translated chunk by chunk, a buffered answer translated whole; a failure before any
 * byte reached the client answered by the rest of the fallback chain.
 */
import { asLocalReply, fallbackMutation } from "../resilience/fallback-response.ts";
import type { RequestFailover } from "../resilience/request-failover.ts";
import { screenProviderHeaders } from "../providers/response-headers.ts";
import type { CallPlan } from "../translators/compose.ts";
import type { RequestContext } from "./context.ts";
import { finalAnswer } from "./final-answer.ts";
import { CONTINUE, type Headers, type Outcome } from "./outcome.ts";
import { andThen, type Step } from "../../common/step.ts";
import { conversationHeader } from "./conversation-stage.ts";
import { restoredMutation, restoredOutcome } from "./boundary-stage.ts";

export function onResponseHeaders(ctx: RequestContext, headers: Headers, endOfStream: boolean): Step<Outcome> {
  if (ctx.shadow) return CONTINUE;
  ctx.trace?.step("gearbox.response");
  const up = ctx.upstream;
  if (up?.kind === "edge") {
    // The verdict (and every header the client sees) comes with the complete edge answer.
    ctx.answer.status = Number(headers[":status"] ?? 0);
    ctx.answer.headers = headers;
    up.cascade.responseHeaders(ctx.answer.status);
    return CONTINUE;
  }
  if (!ctx.spec || !up?.plan) return CONTINUE;
  const { decision, plan, failover } = up;
  const status = Number(headers[":status"] ?? 0);
  ctx.answer.status = status;
  ctx.answer.headers = headers;
  const failing = failover?.answered(status, ctx.transport === "ext_proc") === true;
  const setHeaders: Headers = {
    "x-gearbox-route": "cloud",
    "x-gearbox-reason": ctx.policy ? `${ctx.policy.reason};${decision.reason}` : decision.reason,
    "x-gearbox-request-id": ctx.id,
    ...ctx.trace?.responseHeaders(),
    // The caller's own limits (the provider's x-ratelimit-* are about Gearbox's key, not the caller's).
    ...ctx.ticket?.headers,
    ...failover?.headers(),
    ...(ctx.conversation && conversationHeader(ctx.conversation.stats)),
    ...ctx.boundary?.headers(),
  };
  if (failing && endOfStream && failover) return fallBack(ctx, failover, Buffer.alloc(0)).then(asLocalReply);
  // Only the provider headers fit for the client go on, the key redacted (`response-headers.ts`).
  const removeHeaders = screenProviderHeaders(headers, decision.provider, setHeaders);
  if (endOfStream) {
    ctx.finish();
    return { kind: "continue", mutation: { setHeaders, removeHeaders } };
  }
  const contentType = (headers["content-type"] ?? "").toLowerCase();
  const streamed = contentType.startsWith("text/event-stream") || contentType.startsWith("application/x-ndjson");
  if (streamed && status < 400) {
    ctx.answer.stream = plan.stream(status, headers);
    ctx.cache.streamStarted(status);
    ctx.runaway?.streamStarted(status);
    // Every client schema Gearbox speaks streams SSE (Ollama's NDJSON is translated).
    if (!contentType.startsWith("text/event-stream")) setHeaders["content-type"] = "text/event-stream";
    // A rewritten stream's length is unknown in advance: let the codec chunk it.
    return { kind: "continue", mutation: { setHeaders, removeHeaders: [...removeHeaders, "content-length"] }, streamResponseBody: true };
  }
  return { kind: "continue", mutation: { setHeaders, removeHeaders } };
}

export function onResponseBody(ctx: RequestContext, chunk: Buffer, endOfStream: boolean): Step<Outcome> {
  if (ctx.shadow) return CONTINUE;
  const up = ctx.upstream;
  if (up?.kind === "edge") {
    if (!endOfStream) return CONTINUE;
    return andThen(up.cascade.verdict(ctx.answer.headers, chunk), (outcome) => cascaded(ctx, outcome));
  }
  if (!ctx.spec || !up?.plan) return CONTINUE;
  const stream = ctx.answer.stream;
  if (stream) return streamed(ctx, stream, chunk, endOfStream);
  if (!endOfStream) return CONTINUE;
  if (up.failover?.pending !== undefined) return fallBack(ctx, up.failover, chunk);
  return passOn(ctx, up.plan, chunk);
}

/** One chunk of a streamed answer, translated for the client. */
function streamed(ctx: RequestContext, stream: NonNullable<RequestContext["answer"]["stream"]>, chunk: Buffer, endOfStream: boolean): Outcome {
  if (chunk.length > 0) ctx.answer.firstByteAt ??= performance.now();
  const pushed = stream.push(chunk);
  const ended = endOfStream ? stream.end() : undefined;
  ctx.answer.usage = ended?.usage ?? pushed.usage ?? ctx.answer.usage;
  if (endOfStream) ctx.finish();
  const translated = ended?.body ? Buffer.concat([pushed.body ?? chunk, ended.body]) : (pushed.body ?? chunk);
  // Placeholders restored; a split one waits for its rest (`boundary/stream-restore.ts`).
  const boundary = ctx.boundary;
  const body = boundary?.masker ? boundary.restoreStream(translated, endOfStream) : translated;
  ctx.cache.streamed(body, endOfStream);
  ctx.runaway?.streamed(body, endOfStream);
  ctx.conversation?.answer.chunk(body);
  if (pushed.body === undefined && ended?.body === undefined && body === translated) return CONTINUE;
  return { kind: "continue", mutation: { body } };
}

/** The provider's complete answer, translated for the client. */
function passOn(ctx: RequestContext, plan: CallPlan, chunk: Buffer): Outcome {
  const cloud = ctx.cloud;
  const answer = finalAnswer(plan, ctx.answer.status, ctx.answer.headers, chunk, cloud?.decision, ctx.id);
  if (ctx.boundary?.masker) answer.mutation = restoredMutation(ctx, answer.mutation, chunk);
  const fallback = cloud?.failover?.headers()["x-gearbox-fallback"];
  if (fallback !== undefined) answer.mutation = { ...answer.mutation, setHeaders: { ...answer.mutation?.setHeaders, "x-gearbox-fallback": fallback } };
  ctx.answer.usage = answer.usage;
  if (answer.cacheable !== undefined) ctx.conversation?.answer.json(answer.mutation?.body ?? chunk);
  if (answer.cacheable !== undefined)
    ctx.runaway?.answered(answer.mutation?.setHeaders?.["content-type"] ?? ctx.answer.headers["content-type"], answer.mutation?.body ?? chunk);
  ctx.finish(answer.error);
  if (answer.cacheable !== undefined) ctx.cache.store(answer.cacheable);
  return answer.mutation ? { kind: "continue", mutation: answer.mutation } : CONTINUE;
}

/**
 * The answer failed (429, 5xx, unreachable, timed out) before any byte reached the client: the
 * rest of the fallback chain is called, and the first member's answer replaces the failure
 * (the member is charged). None answers → the failure goes on as it came.
 */
async function fallBack(ctx: RequestContext, failover: RequestFailover, chunk: Buffer): Promise<Outcome> {
  const failed = { status: ctx.answer.status, headers: ctx.answer.headers, body: chunk };
  const node = ctx.headers["x-gearbox-node"];
  const edgeAgents = ctx.snapshot.edgeAgents;
  const context = {
    requestId: ctx.id,
    trace: ctx.trace,
    clientBody: ctx.body ?? Buffer.alloc(0),
    signal: ctx.gone.signal,
    edgeAgent: (model: string) => edgeAgents.pick(model, node)?.address,
  };
  const answer = await failover.run(failed, context).catch((err: unknown) => {
    // The client left during the chain: nothing to answer, the request is recorded (499).
    if (ctx.gone.signal.aborted) return undefined;
    throw err;
  });
  if (ctx.gone.signal.aborted) return CONTINUE;
  const cloud = ctx.cloud;
  if (!answer) return cloud?.plan ? passOn(ctx, cloud.plan, chunk) : CONTINUE;
  if (cloud) ctx.upstream = { ...cloud, decision: answer.decision };
  ctx.answer.status = answer.status;
  ctx.answer.usage = answer.usage;
  if (answer.body.length > 0) ctx.answer.firstByteAt ??= performance.now();
  const mutation = fallbackMutation(answer, ctx.answer.headers, {
    ...failover.headers(),
    "x-gearbox-request-id": ctx.id,
    ...ctx.trace?.responseHeaders(),
    ...ctx.ticket?.headers,
    ...(ctx.conversation && conversationHeader(ctx.conversation.stats)),
  });
  const restored = ctx.boundary?.masker ? (restoredMutation(ctx, mutation, Buffer.alloc(0)) ?? mutation) : mutation;
  heard(ctx, restored.setHeaders, restored.body);
  ctx.finish();
  return { kind: "continue", mutation: restored };
}

/** Ends a cascaded request with its verdict; the record keeps the status the client gets (an upgrade replaces the edge's). */
function cascaded(ctx: RequestContext, outcome: Outcome): Outcome {
  if (ctx.boundary?.masker) outcome = restoredOutcome(ctx, outcome);
  ctx.runaway?.edgeAnswered(outcome);
  if (outcome.kind === "continue" && ctx.conversation) {
    heard(ctx, outcome.mutation?.setHeaders, outcome.mutation?.body);
    outcome = { ...outcome, mutation: { ...outcome.mutation, setHeaders: { ...outcome.mutation?.setHeaders, ...conversationHeader(ctx.conversation.stats) } } };
  }
  const status = outcome.kind === "respond" ? outcome.response.status : Number(outcome.mutation?.setHeaders?.[":status"] ?? ctx.answer.status);
  if (status > 0) ctx.answer.status = status;
  ctx.finish();
  return outcome;
}

/** A whole answer Gearbox made (a fallback's, the cascade's), read for the conversation store: JSON or SSE by its content type. */
function heard(ctx: RequestContext, headers: Headers | undefined, body: Buffer | undefined): void {
  if (!ctx.conversation || !body) return;
  if ((headers?.["content-type"] ?? "").startsWith("text/event-stream")) ctx.conversation.answer.chunk(body);
  else ctx.conversation.answer.json(body);
}
