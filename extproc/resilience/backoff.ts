/**
 * How long to wait before a retry: exponential back-off with full jitter (a random delay in
 * [0, min(max, base·2^(retry-1))]), so that callers failed together do not retry together; a
 * provider's `retry-after` is a floor.
 */
export interface BackoffSettings {
  base_backoff_ms: number;
  max_backoff_ms: number;
}

/** `retry`: 1 for the first retry. `random`: in [0, 1). `retryAfter`: what the provider asked for. */
export function backoffMs(settings: BackoffSettings, retry: number, random: () => number = Math.random, retryAfter?: number): number {
  const ceiling = Math.min(settings.max_backoff_ms, settings.base_backoff_ms * 2 ** Math.max(0, retry - 1));
  const jittered = Math.floor(random() * ceiling);
  return retryAfter === undefined ? jittered : Math.max(retryAfter, jittered);
}
