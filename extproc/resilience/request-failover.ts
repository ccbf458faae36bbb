/**
 * One request's provider failover, for the processor: its fallback chain, the attempts so far,
 * and the two moments Gearbox acts. At routing, a primary whose breaker is open is skipped for
 * the first member whose breaker lets a call through (through Envoy, `x-gearbox-upstream` then
 * names that member's cluster: a dead provider costs no latency). When the answer comes back a
 * failure (429, 5xx, Envoy's or the front door's local reply for an unreachable or timed-out
 * upstream) before any byte reached the client, the rest of the chain is called by Gearbox.
 */
import type { GatewayConfig } from "../config/load.ts";
import type { ParsedCall } from "../endpoints/spec.ts";
import type { Headers } from "../processor/outcome.ts";
import type { ProviderRoute } from "../routing/provider-route.ts";
import type { RequestTrace } from "../telemetry/request-trace.ts";
import { AttemptLog } from "./attempt-log.ts";
import { answerFailure, statusFailure, type FailureCause } from "./failure-cause.ts";
import { fallBack, type FallbackAnswer } from "./fallback-call.ts";
import type { FallbackMember } from "./fallback-chains.ts";
import type { ProviderHealth } from "./provider-health.ts";

export interface FailoverSetup {
  config: GatewayConfig;
  health: ProviderHealth;
  parsed: ParsedCall;
  primary: ProviderRoute;
  /** The route decision's fallback chain (`routing/route.ts`). */
  chain: readonly FallbackMember[];
}

export class RequestFailover {
  readonly log = new AttemptLog();
  /** Chain members not tried yet. */
  private rest: FallbackMember[];
  /** The provider the request is on now (the primary, or the member routing steered to). */
  private current: string;
  /** The answer's failure, once the response headers said so and a member is left to try. */
  pending: FailureCause | undefined;

  constructor(private readonly setup: FailoverSetup) {
    this.current = setup.primary.provider.name;
    this.rest = [...setup.chain];
  }

  /** Routing: the member to send the call to instead of the primary, whose breaker is open; undefined → the primary. */
  steer(): (FallbackMember & { kind: "cloud" }) | undefined {
    const { health, primary } = this.setup;
    if (this.rest.length === 0 || health.breaker(primary.provider.name).tryAcquire()) return undefined;
    const index = this.rest.findIndex((m) => m.kind === "cloud" && health.breaker(m.provider.name).tryAcquire());
    const member = this.rest[index];
    if (member?.kind !== "cloud") return undefined;
    this.log.failed(primary.provider.name, "breaker_open");
    for (const skipped of this.rest.slice(0, index)) if (skipped.kind === "cloud") this.log.failed(skipped.provider.name, "breaker_open");
    this.rest = this.rest.slice(index + 1);
    this.current = member.provider.name;
    return member;
  }

  /**
   * The answer's status and headers. `countsForBreaker`: the call was Envoy's (the front door's
   * own attempts are counted as they are made). True when the chain takes over: the answer is a
   * failure and a member is left.
   */
  answered(status: number, countsForBreaker: boolean): boolean {
    const failure = statusFailure(status);
    if (countsForBreaker) {
      const breaker = this.setup.health.breaker(this.current);
      if (failure === undefined) breaker.success();
      else breaker.failure();
    }
    if (failure === undefined) {
      if (this.log.eventful) this.log.answered(this.current);
      return false;
    }
    this.pending = this.rest.length > 0 ? failure : undefined;
    if (this.pending === undefined && this.log.eventful) this.log.failed(this.current, failure);
    return this.pending !== undefined;
  }

  /** The front door retries the current provider: the failed attempt is logged. */
  retried(cause: FailureCause): void {
    this.log.failed(this.current, cause);
  }

  /** Whether an unreachable or timed-out upstream would be answered by the chain. */
  get canFallBack(): boolean {
    return this.rest.length > 0;
  }

  /** Calls the rest of the chain; undefined when no member answered (the first failure goes to the client). */
  async run(
    failed: { status: number; headers: Headers; body: Buffer },
    ctx: { requestId: string; trace: RequestTrace | undefined; clientBody: Buffer; signal?: AbortSignal; edgeAgent(model: string): string | undefined },
  ): Promise<FallbackAnswer | undefined> {
    const cause = answerFailure(failed.status, failed.headers, failed.body) ?? this.pending ?? String(failed.status);
    this.log.failed(this.current, cause);
    // The failed call's span ends with its failure (the request's own status will be the fallback's).
    ctx.trace?.upstream?.end({ message: `${this.current} failed: ${cause}`, status: failed.status });
    this.pending = undefined;
    const members = this.rest;
    this.rest = [];
    const { config, health, parsed, primary } = this.setup;
    return fallBack(members, {
      parsed,
      clientBody: ctx.clientBody,
      health,
      retry: config.resilience.retry,
      log: this.log,
      routeReason: primary.reason,
      requestId: ctx.requestId,
      trace: ctx.trace,
      ...(ctx.signal && { signal: ctx.signal }),
      edgeAgent: (model) => ctx.edgeAgent(model),
      edgeTimeoutMs: config.edge.timeout_ms,
    });
  }

  /** Response headers saying what happened (`x-gearbox-fallback`), when anything failed. */
  headers(): Headers {
    const header = this.log.header();
    return header === undefined ? {} : { "x-gearbox-fallback": header };
  }
}
