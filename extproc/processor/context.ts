/**
 * One request's state as the phases build it, and the two ways a request ends: refused
 * (`reject`) or finished (`finish`, which books its admission and hands its one record to
 * telemetry). The phase handlers (`request-phase.ts`, `response-phase.ts`) read and fill it;
 * the processor (`processor.ts`) only sequences them.
 */
import type { Usage } from "../../common/canonical/types.ts";
import { toErrorResponse, type ErrorResponse, type GatewayError } from "../../common/errors.ts";
import type { Logger } from "../../common/telemetry/logger.ts";
import type { Tracer } from "@opentelemetry/api";
import type { ResponseCache } from "../cache/response-cache.ts";
import type { SemanticCache } from "../cache/semantic/semantic-cache.ts";
import type { EdgeCascade } from "../cascade/cascade.ts";
import type { EndpointSpec, ParsedCall } from "../endpoints/spec.ts";
import type { AuthDeps } from "../governance/auth.ts";
import type { Governor, Ticket } from "../governance/governor.ts";
import type { Caller } from "../governance/model.ts";
import type { RequestFailover } from "../resilience/request-failover.ts";
import type { PolicyDecision } from "../routing/policy/index.ts";
import type { ProviderRoute } from "../routing/provider-route.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { RoutingState } from "../runtime/routing-state.ts";
import type { RuntimeSnapshot } from "../runtime/snapshot.ts";
import type { RequestTrace } from "../telemetry/request-trace.ts";
import { endRequestTrace } from "../telemetry/request-trace-spans.ts";
import { logOnly, type Telemetry } from "../telemetry/telemetry.ts";
import type { CallPlan } from "../translators/compose.ts";
import type { Conversations, ConversationTurn } from "../conversation/conversations.ts";
import type { StreamTranslator } from "../translators/translator.ts";
import { settlementUsage } from "./admission.ts";
import { RequestCache } from "./cache-stage.ts";
import type { Headers, Outcome } from "./outcome.ts";
import { requestRecord, type Transport } from "./request-record.ts";
import type { RunawayStage } from "./runaway-stage.ts";
import type { BoundaryState } from "../boundary/stage.ts";

/** The caller as the transport identifies it. */
export interface ClientIdentity {
  /** Source IP (no port). */
  address?: string;
  /** Workload identity (SPIFFE URI) from mTLS. */
  principal?: string;
}

export interface ProcessorDeps {
  /** The snapshot requests start under (swapped when the control plane pushes a policy) and the routing state that outlives it. */
  runtime: Runtime;
  logger: Logger;
  /** Who may call and how much: authentication and limits. Absent → neither (embedded tests). */
  governance?: Governance;
  /** The exact response cache (`cache.exact`); absent → no exact caching. */
  cache?: ResponseCache;
  /** The semantic cache (`cache.semantic`); absent → no semantic caching. */
  semanticCache?: SemanticCache;
  /** OpenTelemetry tracer (`telemetry.tracing`); absent → no tracing. */
  tracer?: Tracer;
  /** Where finished requests go (log line, metrics); absent → the log line alone. */
  telemetry?: Telemetry;
  /** Conversations kept by the gateway (`conversations:`); absent → the client keeps its history. */
  conversations?: Conversations;
}

/** Authentication (tenants, keys, workload identities) and the limits governor. */
export interface Governance {
  auth: AuthDeps;
  governor: Governor;
}

/** Where the call was sent: an edge agent (the cascade decides on its answer) or a provider. */
export type Upstream =
  | { kind: "edge"; cascade: EdgeCascade }
  | {
      kind: "cloud";
      decision: ProviderRoute;
      /** Absent when the call could not be planned for the provider (the client got the error). */
      plan: CallPlan | undefined;
      failover: RequestFailover | undefined;
    };

/** The answer as it comes back. */
export interface Answer {
  status: number;
  headers: Headers;
  /** A streamed answer's translator. */
  stream?: StreamTranslator;
  usage?: Usage;
  /** When the first answer bytes of a stream went towards the client (TTFT). */
  firstByteAt?: number;
}

export class RequestContext {
  readonly startedAt = performance.now();
  /** The configuration this request runs under: a policy pushed mid-request applies from the next one. */
  readonly snapshot: RuntimeSnapshot;
  readonly state: RoutingState;
  /** The caches' part: lookup, and the answer stored after a miss. */
  readonly cache: RequestCache;
  /** Made when first asked for: most requests end without anyone listening for their abort. */
  private goneController: AbortController | undefined;

  // The request, as its headers and body said.
  spec: EndpointSpec | undefined;
  id = "";
  query = "";
  headers: Headers = {};
  client: ClientIdentity = {};
  /** The client's request bytes, for a fallback that sends them as they are. */
  body: Buffer | undefined;
  /** The body Gearbox wrote in place of the client's (history in front, `conversation_id` out): what goes upstream. */
  rewrittenBody: Buffer | undefined;
  trace: RequestTrace | undefined;
  /** Shadow mode: decide and record, change nothing (`shadow:` config, or Envoy's observability mode). */
  shadow = false;
  observing = false;

  // The call: who, what, where.
  caller: Caller | undefined;
  ticket: Ticket | undefined;
  /** Runaway protection's part (fingerprint, answer recorded for repeats, replay), once admitted. */
  runaway: RunawayStage | undefined;
  parsed: ParsedCall | undefined;
  /** The routing policy's decision, when it was consulted. */
  policy: PolicyDecision | undefined;
  /** What the edge intent layer said, for the request log (`code_gen@0.812`, `timeout`, …). */
  edgeIntent: string | undefined;
  upstream: Upstream | undefined;
  /** The conversation the request belongs to (`conversation_id` or `x-gearbox-conversation-id`), once read. */
  conversationId: string | undefined;
  /** The stored history in front of the client's messages, when the gateway keeps the conversation. */
  conversation: ConversationTurn | undefined;

  /** What the data boundary found and masked (`boundary/`); absent → nothing detected. */
  boundary: BoundaryState | undefined;

  answer: Answer = { status: 0, headers: {} };
  logged = false;
  /** While the transport writes the answer (`holdRecord`): `finish` ends the request, `releaseRecord` records it. */
  private holding = false;
  private held: { error: GatewayError | undefined } | undefined;

  constructor(
    readonly deps: ProcessorDeps,
    readonly transport: Transport,
  ) {
    this.snapshot = deps.runtime.current();
    this.state = deps.runtime.state;
    this.cache = new RequestCache(deps, this.snapshot.config);
  }

  /** Aborted when the transport gives up on the request: fallback calls stop. */
  get gone(): AbortController {
    return (this.goneController ??= new AbortController());
  }

  /**
   * The transport gave up on the request (the client left, Envoy closed the stream). Nothing to
   * tell when the request had finished and no call of it ever asked for the signal: the usual
   * end of every ext_proc stream costs no controller, no error and no event.
   */
  abandon(reason: string): void {
    if (this.goneController === undefined && this.logged) return;
    if (!this.gone.signal.aborted) this.gone.abort(new Error(reason));
  }

  get config(): RuntimeSnapshot["config"] {
    return this.snapshot.config;
  }

  get cascade(): EdgeCascade | undefined {
    return this.upstream?.kind === "edge" ? this.upstream.cascade : undefined;
  }

  /** The provider a cloud call (or its fallback) went to. */
  get cloud(): (Upstream & { kind: "cloud" }) | undefined {
    return this.upstream?.kind === "cloud" ? this.upstream : undefined;
  }

  /** Ends the request with `error` as the client's answer. */
  reject(error: GatewayError): Outcome {
    this.finish(error);
    const response = this.errorResponse(error);
    if (this.trace) Object.assign(response.headers, this.trace.responseHeaders());
    return { kind: "respond", response };
  }

  /** `error` as this request's client reads errors: its endpoint's schema (Anthropic's, Gemini's), OpenAI's by default. */
  errorResponse(error: unknown): ErrorResponse {
    return toErrorResponse(error, this.id || undefined, this.spec?.errorBody);
  }

  /** Ends the request: settles its admission and hands its one record to telemetry (log line, metrics). */
  finish(error?: GatewayError): void {
    if (this.logged) return;
    this.logged = true;
    if (this.holding) this.held = { error };
    else this.record(error);
  }

  /**
   * The transport is about to write the answer: the request's record (its admission settled, its
   * log line and metrics) waits for `releaseRecord`, so the client's bytes leave first. The front
   * door releases right after its write, in the same turn, before it reads anything else; ext_proc
   * once HTTP/2 has sent the reply, in the same turn of the event loop. Other requests see the
   * state at most one turn later than before, never a request counted twice or lost.
   */
  holdRecord(): void {
    this.holding = true;
  }

  /** The answer is written: the held record is made. A failure in it is logged, never the call's. */
  releaseRecord(): void {
    this.holding = false;
    const held = this.held;
    if (!held) return;
    this.held = undefined;
    try {
      this.record(held.error);
    } catch (err) {
      this.deps.logger.error({ err, request_id: this.id }, "request record failed");
    }
  }

  private record(error: GatewayError | undefined): void {
    const cloud = this.cloud;
    const record = requestRecord({
      requestId: this.id,
      traceId: this.trace?.traceId,
      transport: this.transport,
      config: this.config,
      caller: this.caller,
      endpoint: this.spec?.name,
      parsed: this.parsed,
      decision: cloud?.decision,
      cascade: this.cascade,
      policy: this.policy,
      edgeIntent: this.edgeIntent,
      cache: this.cache,
      status: this.answer.status,
      error,
      usage: this.answer.usage,
      startedAt: this.startedAt,
      firstByteAt: this.answer.firstByteAt,
      now: performance.now(),
      shadow: this.shadow,
      runaway: this.runaway?.outcome,
      attempts: cloud?.failover?.log,
      conversation: this.conversation?.stats,
      boundary: this.boundary,
    });
    const cost = record.cost_usd;
    if (typeof cost === "number") this.state.cloudSpend.add(cost);
    this.settleTicket(cost, error);
    this.runaway?.finished(error);
    const target = record.route === "cache" ? undefined : record.route;
    this.conversation?.finish(
      target ?? this.conversation.lastTarget ?? (record.route === "cache" ? "cloud" : undefined),
      !error && !this.shadow && this.answer.status === 200,
    );
    if (target && !error) {
      this.state.sticky.set(this.conversationId, target);
      if (target === "cloud" && !this.cascade && this.answer.status === 200 && !this.parsed?.stream)
        this.state.cloudLatency.record(performance.now() - this.startedAt);
    }
    (this.deps.telemetry ?? logOnly(this.deps.logger)).request(record, this.config);
    endRequestTrace(this.trace, record, this.parsed, cloud?.decision.provider, error);
  }

  /** Books what the call used against the caller's limits (real usage in place of the estimate). */
  private settleTicket(cost: number | null | undefined, error?: GatewayError): void {
    const ticket = this.ticket;
    if (!ticket) return;
    this.ticket = undefined;
    // Shadowed: nothing went upstream through Gearbox; the admission is handed back at once.
    if (this.shadow) return void ticket.release();
    const usage = settlementUsage(this.answer.usage, this.cascade?.event, cost);
    void (error ? ticket.release(usage) : ticket.settle(usage));
  }
}
