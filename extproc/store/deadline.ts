/**
 * A bound on how long the request path waits for shared state: `withDeadline` settles as
 * `promise` does, or rejects with `DeadlineError` after `ms`. The work itself goes on (a Redis
 * command cannot be recalled); its late result is the caller's to use or drop.
 */

export class DeadlineError extends Error {
  constructor(readonly ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = "DeadlineError";
  }
}

export function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new DeadlineError(ms)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}
