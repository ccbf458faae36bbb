/**
 * The one generic processor: a per-request state machine over the phases Envoy's ext_proc filter
 * (or the front door) walks through. Endpoint specs supply parsing and translation; the route
 * decision (`routing/route.ts`) says where the call goes; the phase handlers
 * (`request-phase.ts`, `response-phase.ts`) fill the request's context (`context.ts`); this file
 * only sequences them and refuses a phase out of order.
 *
 *   request_headers ─► request_body ─► response_headers ─► response_body …
 *          └──────────────(no body)───────────►┘      ▲            │
 *                                                     └────────────┘ a local reply after a failed read
 */
import { GatewayError, type ErrorResponse } from "../../common/errors.ts";
import { traceRetry } from "../resilience/attempt-spans.ts";
import type { ProviderHealth } from "../resilience/provider-health.ts";
import { operationOf } from "../telemetry/request-trace-spans.ts";
import { RequestContext, type ClientIdentity, type ProcessorDeps } from "./context.ts";
import type { Headers, Outcome } from "./outcome.ts";
import type { Transport } from "./request-record.ts";
import { onRequestBody, onRequestHeaders } from "./request-phase.ts";
import { onResponseBody, onResponseHeaders } from "./response-phase.ts";
import type { Step } from "../../common/step.ts";

export type { ClientIdentity, Governance, ProcessorDeps } from "./context.ts";

type Phase = "request_headers" | "request_body" | "response_headers" | "response_body";

/** The phases each phase may be followed by. */
const NEXT: Record<Phase | "start", readonly Phase[]> = {
  start: ["request_headers"],
  request_headers: ["request_body", "response_headers"],
  request_body: ["response_headers"],
  // The front door answers locally (503/504) when a provider's body fails after its headers: the response starts again.
  response_headers: ["response_body", "response_headers"],
  response_body: ["response_body", "response_headers"],
};

export class RequestProcessor {
  private phase: Phase | "start" = "start";
  private readonly ctx: RequestContext;

  constructor(deps: ProcessorDeps, options: { transport?: Transport } = {}) {
    this.ctx = new RequestContext(deps, options.transport ?? "ext_proc");
  }

  /** True when the request's path is not an API Gearbox handles (it passes through untouched). */
  get passthrough(): boolean {
    return this.ctx.spec === undefined;
  }

  get id(): string {
    return this.ctx.id;
  }

  /** The request's W3C trace id, when tracing is on. */
  get traceId(): string | undefined {
    return this.ctx.trace?.traceId;
  }

  /** Providers' health, for the front door's retries. */
  get providerHealth(): ProviderHealth {
    return this.ctx.snapshot.providerHealth;
  }

  /** True when an upstream that cannot be reached would be answered by the call's fallback chain. */
  get canFallBack(): boolean {
    return this.ctx.cloud?.failover?.canFallBack ?? false;
  }

  /** Envoy's observability mode: answers are ignored, so the request is only observed (shadowed). */
  observeOnly(): void {
    this.ctx.observing = true;
  }

  requestHeaders(headers: Headers, endOfStream: boolean, client: ClientIdentity = {}): Outcome {
    this.enter("request_headers");
    return onRequestHeaders(this.ctx, headers, endOfStream, client);
  }

  requestBody(body: Buffer): Step<Outcome> {
    this.enter("request_body");
    return onRequestBody(this.ctx, body);
  }

  responseHeaders(headers: Headers, endOfStream: false): Outcome;
  responseHeaders(headers: Headers, endOfStream: boolean): Step<Outcome>;
  responseHeaders(headers: Headers, endOfStream: boolean): Step<Outcome> {
    this.enter("response_headers");
    return onResponseHeaders(this.ctx, headers, endOfStream);
  }

  responseBody(chunk: Buffer, endOfStream: boolean): Step<Outcome> {
    this.enter("response_body");
    return onResponseBody(this.ctx, chunk, endOfStream);
  }

  /**
   * The answer is about to be written: the request's record waits until `releaseRecord`
   * (`RequestContext.holdRecord`), which the transport calls once its write has gone out.
   */
  holdRecord(): void {
    this.ctx.holdRecord();
  }

  /** The answer is written: the record held since `holdRecord` is made now. */
  releaseRecord(): void {
    this.ctx.releaseRecord();
  }

  /** The front door retried the call (`resilience/retrying.ts`): `attempt` failed with `cause`. */
  retried(cause: string, attempt: number): void {
    const cloud = this.ctx.cloud;
    cloud?.failover?.retried(cause);
    if (cloud) traceRetry(this.ctx.trace, cause, attempt, operationOf(this.ctx.spec?.name), cloud.decision);
  }

  /** The client went away (or Envoy dropped the stream) before its answer: recorded as 499. */
  abort(reason: string): void {
    this.ctx.abandon(reason);
    if (this.ctx.spec && !this.ctx.logged) this.ctx.finish(new GatewayError(499, "server_error", reason));
  }

  /** `err` as the client's answer in its endpoint's error schema (OpenAI's before the endpoint is known). */
  errorResponse(err: unknown): ErrorResponse {
    return this.ctx.errorResponse(err);
  }

  /** The transport answered the client `error` itself (upstream unreachable 502, timed out 504): recorded as that. */
  fail(error: GatewayError): void {
    if (this.ctx.spec && !this.ctx.logged) this.ctx.finish(error);
  }

  /** Moves to `phase`, or refuses it: a phase out of order is the transport's bug, never a request's. */
  private enter(phase: Phase): void {
    if (!NEXT[this.phase].includes(phase))
      throw new GatewayError(500, "server_error", `ext_proc phase ${phase} cannot follow ${this.phase}.`, { code: "phase_order" });
    this.phase = phase;
  }
}
