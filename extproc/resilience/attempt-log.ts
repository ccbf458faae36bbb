/**
 * The upstream attempts of one request once anything failed: each provider tried, in order, with
 * why it failed — the last one without a cause answered. It is the `x-gearbox-fallback` header,
 * the request log's `upstream_attempts`, and the retry and fallback counters.
 *
 * Header format: attempts joined by `>`, each `<provider>:<cause>`, the provider that answered
 * last and bare: `openai:429>deepseek`, `openai:503>openai:503>anthropic`,
 * `openai:breaker_open>deepseek`. Causes: the HTTP status, `connect`, `timeout`, `breaker_open`
 * (not tried), `unsupported` (the call cannot be translated for it), `no_agent` (no edge agent).
 */
import type { FailureCause } from "./failure-cause.ts";

export interface UpstreamAttempt {
  provider: string;
  /** Why it failed; absent: it answered. */
  cause?: FailureCause;
}

/** Causes under which nothing was sent to the provider. */
const NOT_SENT = new Set(["breaker_open", "unsupported", "no_agent"]);

export class AttemptLog {
  readonly attempts: UpstreamAttempt[] = [];

  failed(provider: string, cause: FailureCause): void {
    this.attempts.push({ provider, cause });
  }

  answered(provider: string): void {
    this.attempts.push({ provider });
  }

  /** True once an attempt failed (before that, nothing is reported). */
  get eventful(): boolean {
    return this.attempts.some((a) => a.cause !== undefined);
  }

  /** `x-gearbox-fallback`; undefined when nothing failed. */
  header(): string | undefined {
    if (!this.eventful) return undefined;
    return this.attempts.map((a) => (a.cause === undefined ? a.provider : `${a.provider}:${a.cause}`)).join(">");
  }

  /** Calls that reached a provider. */
  calls(): number {
    return this.attempts.filter((a) => a.cause === undefined || !NOT_SENT.has(a.cause)).length;
  }
}

/** Failed attempts followed by another to the same provider (retries) or to another (fallbacks). */
export function transitions(attempts: readonly UpstreamAttempt[]): {
  retries: { provider: string; cause: string }[];
  fallbacks: { from: string; to: string; cause: string }[];
} {
  const retries: { provider: string; cause: string }[] = [];
  const fallbacks: { from: string; to: string; cause: string }[] = [];
  attempts.forEach((a, i) => {
    const next = attempts[i + 1];
    if (a.cause === undefined || !next) return;
    if (next.provider === a.provider) retries.push({ provider: a.provider, cause: a.cause });
    else fallbacks.push({ from: a.provider, to: next.provider, cause: a.cause });
  });
  return { retries, fallbacks };
}
