/**
 * Calls to one provider with retries, before any byte of the answer reached the client: on a
 * connection failure, a timeout, 429 or 5xx (never on another 4xx), up to `max_attempts`, after
 * a jittered back-off or the provider's `retry-after` (one longer than `max_retry_after_ms` is
 * not waited for: the caller falls back instead), while the provider's retry budget and its
 * breaker allow. Every attempt's outcome is counted by the provider's breaker.
 */
import type { Abortable } from "../../common/net/call-abort.ts";
import type { Headers } from "../processor/outcome.ts";
import { backoffMs } from "./backoff.ts";
import type { RetryConfig } from "./config-schema.ts";
import { errorFailure, statusFailure, type FailureCause } from "./failure-cause.ts";
import type { ProviderHealth } from "./provider-health.ts";
import { retryAfterMs } from "./retry-after.ts";

export interface Answered<T> {
  status: number;
  headers: Headers;
  value: T;
}

export interface RetryRun<T> {
  provider: string;
  health: ProviderHealth;
  retry: RetryConfig;
  /** One attempt (1 = the first): the answer once its status and headers are known. */
  attempt(n: number): Promise<Answered<T>>;
  /** A failed answer that will be retried: let go of it. */
  discard?(value: T): void;
  /** The failure an answer is (default: 429 or 5xx by status). */
  failureOf?(answer: Answered<T>): FailureCause | undefined;
  /** Told before each retry, with why. */
  onRetry?(cause: FailureCause, attempt: number): void;
  /** The first attempt needs the breaker's leave too (a fallback); the primary's was given at routing. */
  gated: boolean;
  /** The client left: stop, throwing its reason. */
  signal?: Abortable;
  random?: () => number;
}

export type RetryResult<T> =
  /** The last answer; `failure` when it is one (the caller may fall back). */
  | (Answered<T> & { kind: "answer"; failure: FailureCause | undefined; attempts: number })
  /** The last attempt threw (connection failure, timeout). */
  | { kind: "error"; error: unknown; failure: FailureCause; attempts: number }
  /** Not tried: the provider's breaker is open. */
  | { kind: "refused"; failure: "breaker_open"; attempts: 0 };

export async function withRetries<T>(run: RetryRun<T>): Promise<RetryResult<T>> {
  const breaker = run.health.breaker(run.provider);
  if (run.gated && !breaker.tryAcquire()) return { kind: "refused", failure: "breaker_open", attempts: 0 };
  run.health.budget(run.provider).recordCall();
  for (let n = 1; ; n++) {
    let answer: Answered<T>;
    try {
      answer = await run.attempt(n);
    } catch (err) {
      if (run.signal?.aborted) throw run.signal.reason;
      const failure = errorFailure(err);
      breaker.failure();
      const delay = retryDelay(run, n, undefined);
      if (delay === undefined) return { kind: "error", error: err, failure, attempts: n };
      run.onRetry?.(failure, n);
      await sleep(delay, run.signal);
      continue;
    }
    const failure = (run.failureOf ?? ((a: Answered<T>) => statusFailure(a.status)))(answer);
    if (failure === undefined) {
      breaker.success();
      return { kind: "answer", ...answer, failure, attempts: n };
    }
    breaker.failure();
    const delay = retryDelay(run, n, retryAfterMs(answer.headers));
    if (delay === undefined) return { kind: "answer", ...answer, failure, attempts: n };
    run.discard?.(answer.value);
    run.onRetry?.(failure, n);
    await sleep(delay, run.signal);
  }
}

/** How long to wait before attempt `n + 1`, or undefined when there is none. The budget is spent last. */
function retryDelay(run: RetryRun<unknown>, n: number, retryAfter: number | undefined): number | undefined {
  if (n >= run.retry.max_attempts || run.signal?.aborted) return undefined;
  if (retryAfter !== undefined && retryAfter > run.retry.max_retry_after_ms) return undefined;
  if (!run.health.breaker(run.provider).tryAcquire()) return undefined;
  if (!run.health.budget(run.provider).tryRetry()) return undefined;
  return backoffMs(run.retry, n, run.random, retryAfter);
}

function sleep(ms: number, signal?: Abortable): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason instanceof Error ? signal.reason : new Error("aborted"));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
