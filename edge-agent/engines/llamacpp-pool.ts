/**
 * A fixed set of resources (a context's sequences) lent out one caller at a time, waiters served
 * first come, first served. A sequence holds one conversation's KV cache, so two chats must never
 * share one at the same time; this is what keeps concurrent calls from corrupting state.
 */

/** A borrowed resource; `release` returns it (idempotent). */
export interface Lease<T> {
  readonly value: T;
  release(): void;
}

interface Waiter<T> {
  resolve: (lease: Lease<T>) => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal;
  onAbort: () => void;
}

/** Lends each of a fixed set of values to one holder at a time. */
export class Pool<T> {
  private readonly free: T[];
  private readonly waiters: Array<Waiter<T>> = [];
  private readonly idle: Array<() => void> = [];
  private readonly size: number;

  constructor(values: readonly T[]) {
    this.free = [...values];
    this.size = values.length;
  }

  /** How many values are lent out now. */
  get busy(): number {
    return this.size - this.free.length;
  }

  /** Waits for a free value; rejects with `signal.reason` if the signal aborts first. */
  acquire(signal: AbortSignal): Promise<Lease<T>> {
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    const value = this.free.pop();
    if (value !== undefined) return Promise.resolve(this.lease(value));
    return new Promise((resolve, reject) => {
      const waiter: Waiter<T> = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          const at = this.waiters.indexOf(waiter);
          if (at !== -1) this.waiters.splice(at, 1);
          reject(signal.reason as Error);
        },
      };
      signal.addEventListener("abort", waiter.onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Resolves once every value is back in the pool. */
  whenIdle(): Promise<void> {
    if (this.busy === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private lease(value: T): Lease<T> {
    let released = false;
    return {
      value,
      release: () => {
        if (released) return;
        released = true;
        this.giveBack(value);
      },
    };
  }

  private giveBack(value: T): void {
    const waiter = this.waiters.shift();
    if (waiter) {
      waiter.signal.removeEventListener("abort", waiter.onAbort);
      waiter.resolve(this.lease(value));
      return;
    }
    this.free.push(value);
    if (this.busy === 0) for (const resolve of this.idle.splice(0)) resolve();
  }
}
