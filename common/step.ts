/**
 * A phase's answer may be ready at once or after I/O (authentication, the cache, admission, an
 * edge intent call, a fallback chain). `Step` is either; `andThen` chains a step without making
 * the synchronous case wait a turn of the event loop. `andThen` and `isPending` are the one place
 * that tells the two apart.
 */
export type Step<T> = T | Promise<T>;

export function andThen<T, U>(step: Step<T>, next: (value: T) => Step<U>): Step<U> {
  return isPending(step) ? step.then(next) : next(step);
}

/** True when the step is still pending (a transport that must tell Envoy to wait longer asks this). */
export function isPending<T>(step: Step<T>): step is Promise<T> {
  return typeof (step as { then?: unknown } | null)?.then === "function";
}
