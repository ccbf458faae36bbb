/**
 * The Governor: admits a call against its tenant's and its key's limits before anything goes
 * upstream, and books what the call really used after. One store round trip per admission
 * (all limits of tenant and key at once, all or nothing), one per settlement.
 *
 * How the processor uses it:
 *   1. Once the request is parsed and routed, before the upstream call:
 *      `admit({ caller, model, estimate, fingerprint, target })`.
 *      - `{ ok: true, ticket }`: send it; `ticket.headers` (x-ratelimit-*) may go on the response.
 *      - `{ ok: false, degradeToEdge: true, error }`: a token or cost cap was hit and the tenant
 *        allows the edge: route to the edge and `admit` again with `target: "edge"`; answer
 *        `error` when no edge can take it.
 *      - `{ ok: false, error, runaway: true }`: a repeat past `runaway.max_identical`: answer it
 *        from `replays` (the answer recorded when `ticket.repeatsLeft` was 0) when there is one,
 *        else `error`.
 *      - `{ ok: false, error }`: answer `error` (429, OpenAI-shaped via `toErrorResponse`).
 *   2. When the call completes, streamed or not, with the provider's usage: `ticket.settle(usage)`.
 *   3. On abort or error: `ticket.release(whatIsKnown?)`. Both are idempotent (the first wins).
 *
 * Holds (concurrency leases, token and cost reservations) live `holdTtlMs` (2 min) and are
 * renewed every third of it while the ticket is open (15 min at most), so a crashed replica's
 * holds lapse within minutes while a 10-minute stream keeps its own. With `FailoverLimiter` as the store nothing
 * here rejects; another store's errors propagate from `admit` and are logged from `settle`.
 */
import { GatewayError, unreachable } from "../../common/errors.ts";
import type { Logger } from "../../common/telemetry/logger.ts";
import { andThen, type Step } from "../../common/step.ts";
import type { Admission, Grant, LimiterStore } from "../store/limiter.ts";
import type { Caller } from "./model.ts";
import { LIMIT_NAMES, METERS, nanoUsd, planChecks, type CallEstimate, type LimitName, type PlannedCheck, type RouteTarget } from "./limits.ts";
import { CostAlerts } from "./alerts.ts";
import { runawayCheck, type RunawayConfig } from "./runaway.ts";
import { RunawayReplays } from "./runaway-replay.ts";

export const DEFAULT_HOLD_TTL_MS = 120_000;
/** A settlement with nothing to book: done already. */
const SETTLED: Promise<void> = Promise.resolve();
const settled = (): Promise<void> => SETTLED;
/** Holds are renewed for at most this long (over the 10-minute upstream timeout): a ticket never settled cannot hold a slot forever. */
export const DEFAULT_MAX_HOLD_MS = 15 * 60_000;

export interface AdmitRequest {
  caller: Caller;
  /** The client-facing model (named in cost messages). */
  model: string;
  estimate: CallEstimate;
  /** `callerFingerprint(scope, shape, body)` (`runaway.ts`); absent → no runaway check. */
  fingerprint?: string;
  /** How a runaway refusal names whose requests repeat (`runawayScope(…).who`); absent → the tenant. */
  repeater?: string;
  target: RouteTarget;
}

export interface ActualUsage {
  inputTokens: number;
  outputTokens: number;
  /** Cloud cost at list price; 0 on the edge or when unpriced. */
  costUsd: number;
}

export interface Ticket {
  /** `x-ratelimit-limit/remaining-requests|tokens` of the tightest scope, for the response. */
  readonly headers: Readonly<Record<string, string>>;
  /** The store's clock at admission (ms since the epoch). */
  readonly admittedAtMs: number;
  /** Identical requests the runaway window still admits after this one; absent → no runaway check. 0: this is the window's last. */
  readonly repeatsLeft: number | undefined;
  /** Books the real usage in place of the estimate and releases the concurrency slot. */
  settle(usage: ActualUsage): Promise<void>;
  /** The call ended early: books what is known (absent → 0) and releases the slot. */
  release(known?: Partial<ActualUsage>): Promise<void>;
}

export type AdmitDecision = { ok: true; ticket: Ticket } | { ok: false; error: GatewayError; degradeToEdge?: true; runaway?: true };

export interface ThrottledLimit {
  tenant: string;
  /** The key's id when the key's own limit refused; absent → the tenant's. */
  key?: string;
  limit: LimitName;
  /** Refusals in the current and the previous minute. */
  denials: number;
}

export interface GovernorOptions {
  store: LimiterStore;
  runaway: RunawayConfig;
  logger: Logger;
  /** Hold lifetime without renewal; default 2 min. */
  holdTtlMs?: number;
  /** Longest a ticket's holds are renewed; default 15 min. */
  maxHoldMs?: number;
}

export class Governor {
  private readonly store: LimiterStore;
  private readonly holdTtlMs: number;
  private readonly maxHoldMs: number;
  /** Tickets holding leases or reservations, renewed until settled. */
  private readonly open = new Set<GrantTicket>();
  private readonly renewTimer: NodeJS.Timeout;
  private renewing = false;
  /** Tenants' cost alert thresholds crossed (logged once per tenant, threshold and day). */
  readonly alerts: CostAlerts;
  /** The answers repeats past `runaway.max_identical` are replayed from; absent → refused (`runaway.replay: false`, or runaway protection off). */
  readonly replays: RunawayReplays | undefined;

  constructor(private readonly options: GovernorOptions) {
    this.store = options.store;
    this.holdTtlMs = options.holdTtlMs ?? DEFAULT_HOLD_TTL_MS;
    this.alerts = new CostAlerts(options.logger);
    this.maxHoldMs = options.maxHoldMs ?? DEFAULT_MAX_HOLD_MS;
    const runaway = options.runaway;
    this.replays =
      runaway.enable && (runaway.replay ?? true)
        ? new RunawayReplays({
            windowMs: runaway.window_ms,
            maxEntries: runaway.replay_max_entries ?? 1_000,
            maxBytes: runaway.replay_max_bytes ?? 16 * 1024 * 1024,
          })
        : undefined;
    this.renewTimer = setInterval(() => void this.renewOpen(), this.holdTtlMs / 3);
    this.renewTimer.unref();
  }

  /** Answers at once (no promise) when the store does: the in-memory store of embedded defaults, or no check to run. */
  admit(request: AdmitRequest): Step<AdmitDecision> {
    const { caller, target } = request;
    const planned = planChecks(caller, target, request.estimate, runawayCheck(this.options.runaway, request.fingerprint));
    if (planned.length === 0) return { ok: true, ticket: new GrantTicket({ id: "", tenant: caller.tenant.id, holds: [] }, {}, Date.now(), undefined, settled) };
    return andThen(
      this.store.admit(
        caller.tenant.id,
        planned.map((p) => p.check),
        this.holdTtlMs,
      ),
      (admission) => this.decided(request, planned, admission),
    );
  }

  private decided(request: AdmitRequest, planned: readonly PlannedCheck[], admission: Admission): AdmitDecision {
    const { caller, target } = request;
    if (!admission.ok) {
      const refused = planned[admission.failed];
      if (!refused) throw new Error(`Limiter refused check ${admission.failed} of ${planned.length}`);
      const error = limitError(refused, admission, request);
      const capped = refused.limit === "tokens_per_minute" || refused.limit === "daily_cost_usd";
      if (refused.limit === "runaway") return { ok: false, error, runaway: true };
      return capped && target === "cloud" && caller.tenant.degrade_to_edge ? { ok: false, error, degradeToEdge: true } : { ok: false, error };
    }
    this.watchCost(caller, planned, admission.remaining);
    const repeatsLeft = planned[0]?.limit === "runaway" ? admission.remaining[0] : undefined;
    const ticket = new GrantTicket(admission.grant, successHeaders(planned, admission.remaining), admission.atMs, repeatsLeft, (t, usage) =>
      this.finish(t, usage),
    );
    if (admission.grant.holds.length > 0) this.open.add(ticket);
    return { ok: true, ticket };
  }

  /** The runaway protection this governor counts with. */
  get runaway(): RunawayConfig {
    return this.options.runaway;
  }

  /** Who was refused lately among `tenants`, by which limit (for `gearbox limits show`). */
  async throttled(tenants: readonly string[]): Promise<ThrottledLimit[]> {
    const entries = await this.store.throttled(tenants);
    return entries.flatMap(({ tenant, label, denials }) => {
      const slash = label.lastIndexOf("/");
      const scope = label.slice(0, slash);
      const limit = LIMIT_NAMES.find((name) => name === label.slice(slash + 1));
      if (!limit) return [];
      return [{ tenant, ...(scope.startsWith("key:") && { key: scope.slice(4) }), limit, denials }];
    });
  }

  /** The tenant's daily cost use after this admission, for its `alert_at` thresholds. */
  private watchCost(caller: Caller, planned: readonly PlannedCheck[], remaining: readonly number[]): void {
    const i = planned.findIndex((p) => p.limit === "daily_cost_usd" && p.key === undefined);
    const check = planned[i];
    if (!check) return;
    const capNano = nanoUsd(check.configured);
    if (capNano > 0) this.alerts.observe(caller.tenant, 1 - (remaining[i] ?? capNano) / capNano);
  }

  /** Stops renewing holds (open tickets then lapse after their TTL). */
  close(): void {
    clearInterval(this.renewTimer);
  }

  private finish(ticket: GrantTicket, usage: Record<string, number>): Promise<void> {
    this.open.delete(ticket);
    // Nothing held (a repeat count alone, the embedded defaults' one check): nothing to book.
    if (ticket.grant.holds.length === 0) return SETTLED;
    return this.settleHolds(ticket, usage);
  }

  private async settleHolds(ticket: GrantTicket, usage: Record<string, number>): Promise<void> {
    try {
      await this.store.settle(ticket.grant, usage);
    } catch (err) {
      this.options.logger.warn(
        { err: err instanceof Error ? err.message : String(err), tenant: ticket.grant.tenant },
        "limits: settlement failed; the reservation lapses at its TTL",
      );
    }
  }

  /** False, and forgotten, once a ticket has been open longer than any call may last. */
  private stillHeld(ticket: GrantTicket): boolean {
    if (performance.now() - ticket.openedAt <= this.maxHoldMs) return true;
    this.open.delete(ticket);
    this.options.logger.warn({ tenant: ticket.grant.tenant }, "limits: a ticket was never settled; its holds lapse at their TTL");
    return false;
  }

  private async renewOpen(): Promise<void> {
    if (this.renewing || this.open.size === 0) return;
    this.renewing = true;
    try {
      await Promise.all(
        [...this.open]
          .filter((ticket) => this.stillHeld(ticket))
          .map((ticket) =>
            this.store.renew(ticket.grant, this.holdTtlMs).catch((err: unknown) => {
              this.options.logger.warn(
                { err: err instanceof Error ? err.message : String(err), tenant: ticket.grant.tenant },
                "limits: renewing a hold failed",
              );
            }),
          ),
      );
    } finally {
      this.renewing = false;
    }
  }
}

class GrantTicket implements Ticket {
  readonly openedAt = performance.now();
  private done = false;

  constructor(
    readonly grant: Grant,
    readonly headers: Readonly<Record<string, string>>,
    readonly admittedAtMs: number,
    readonly repeatsLeft: number | undefined,
    private readonly finish: (ticket: GrantTicket, usage: Record<string, number>) => Promise<void>,
  ) {}

  settle(usage: ActualUsage): Promise<void> {
    if (this.done) return Promise.resolve();
    this.done = true;
    return this.finish(this, { [METERS.tokens]: usage.inputTokens + usage.outputTokens, [METERS.cost]: nanoUsd(usage.costUsd) });
  }

  release(known: Partial<ActualUsage> = {}): Promise<void> {
    return this.settle({ inputTokens: known.inputTokens ?? 0, outputTokens: known.outputTokens ?? 0, costUsd: known.costUsd ?? 0 });
  }
}

/** The header suffix of each limit (OpenAI's `requests` and `tokens`, then Gearbox's own). */
const HEADER_NAMES: Record<Exclude<LimitName, "runaway">, string> = {
  requests_per_second: "requests",
  tokens_per_minute: "tokens",
  max_concurrent: "concurrent",
  daily_cost_usd: "cost-usd",
};

/** x-ratelimit-limit/remaining for requests and tokens: the scope with the least left. */
function successHeaders(planned: readonly PlannedCheck[], remaining: readonly number[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const limit of ["requests_per_second", "tokens_per_minute"] as const) {
    let tightest: { configured: number; left: number } | undefined;
    planned.forEach((p, i) => {
      const left = remaining[i] ?? 0;
      if (p.limit === limit && (!tightest || left < tightest.left)) tightest = { configured: p.configured, left };
    });
    if (!tightest) continue;
    headers[`x-ratelimit-limit-${HEADER_NAMES[limit]}`] = String(tightest.configured);
    headers[`x-ratelimit-remaining-${HEADER_NAMES[limit]}`] = String(Math.max(0, tightest.left));
  }
  return headers;
}

type Refusal = Extract<Admission, { ok: false }>;

/** The 429 for a refused check: names the limit and whose it is; retry-after and x-ratelimit-* headers. */
function limitError(p: PlannedCheck, refusal: Refusal, request: AdmitRequest): GatewayError {
  const tenant = `tenant '${request.caller.tenant.id}'`;
  const who = p.key ? `key '${p.key.id}' (${p.key.prefix}…) of ${tenant}` : tenant;
  // A concurrency slot frees when any call ends, usually well before a lease's expiry.
  const retryMs = p.limit === "max_concurrent" ? 1_000 : refusal.retryAfterMs;
  const retryS = Math.max(1, Math.ceil(retryMs / 1000));
  const headers: Record<string, string> = { "retry-after": String(retryS), "x-gearbox-limit": p.check.label };
  const amount = p.check.kind === "budget" ? p.check.amount : 1;
  const left = Math.max(0, p.check.limit - refusal.used);
  let code: string;
  let message: string;
  switch (p.limit) {
    case "requests_per_second":
      code = "rate_limit_requests_per_second";
      message = `Rate limit reached for ${who}: ${p.configured} requests per second.`;
      break;
    case "tokens_per_minute":
      code = "rate_limit_tokens_per_minute";
      message =
        amount > p.check.limit
          ? `This request may use up to ${amount} tokens, more than the limit of ${who} (${p.configured} tokens per minute); lower max_tokens or shorten the prompt.`
          : `Token rate limit reached for ${who}: ${p.configured} tokens per minute (${refusal.used} used or reserved; this request may use up to ${amount}).`;
      break;
    case "max_concurrent":
      code = "concurrency_limit";
      message = `Concurrency limit reached for ${who}: ${p.configured} requests in flight.`;
      break;
    case "daily_cost_usd":
      code = "daily_cost_cap";
      message = `Daily cloud cost cap reached for ${who}: ${usd(p.configured)} per UTC day (${usd(refusal.used / 1e9)} spent or reserved; this call to ${request.model} may cost up to ${usd(amount / 1e9)}). It resets at 00:00 UTC.`;
      break;
    case "runaway": {
      code = "runaway_request_loop";
      const windowS = p.check.kind === "repeat" ? p.check.windowMs / 1000 : 0;
      message = `Runaway request loop: ${request.repeater ?? tenant} sent more than ${p.configured} identical requests within ${windowS} s; this one was not sent to the model.`;
      break;
    }
    default:
      return unreachable(p.limit, "limit");
  }
  if (p.limit !== "runaway") {
    const name = HEADER_NAMES[p.limit];
    headers[`x-ratelimit-limit-${name}`] = String(p.configured);
    headers[`x-ratelimit-remaining-${name}`] = p.limit === "daily_cost_usd" ? String(left / 1e9) : String(left);
    headers[`x-ratelimit-reset-${name}`] = duration(retryMs);
  }
  return new GatewayError(429, "rate_limit_error", `${message} Retry after ${retryS} s.`, { code, headers });
}

function usd(amount: number): string {
  return `$${amount.toFixed(amount !== 0 && amount < 1 ? 4 : 2)}`;
}

/** A duration as OpenAI's reset headers write it: `20ms`, `1.5s`, `6m0s`, `3h2m1s`. */
function duration(ms: number): string {
  if (ms < 1000) return `${Math.ceil(ms)}ms`;
  const total = Math.ceil(ms) / 1000;
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = Number((total % 60).toFixed(3));
  return `${h > 0 ? `${h}h` : ""}${h > 0 || m > 0 ? `${m}m` : ""}${s}s`;
}
