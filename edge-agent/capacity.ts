/**
 * Bounded concurrency with a bounded queue, per model. When both are full the caller is told at
 * once (429 + retry-after), so Gearbox's router can send the request to the cloud instead of
 * letting it wait without bound on a busy device.
 */
import { GatewayError } from "../common/errors.ts";

export interface CapacityOptions {
  /** Requests generating at once. */
  maxConcurrent: number;
  /** Requests waiting for a slot; beyond this they are refused. */
  maxQueue: number;
  /** The `retry-after` (seconds) a refused caller is given. */
  retryAfterSeconds: number;
}

interface Waiter {
  resolve: (release: () => void) => void;
  reject: (err: unknown) => void;
}

export class Capacity {
  private running = 0;
  private readonly queue: Waiter[] = [];

  constructor(
    readonly model: string,
    private readonly options: CapacityOptions,
  ) {}

  get inflight(): number {
    return this.running;
  }

  get queued(): number {
    return this.queue.length;
  }

  /** Waits for a slot; resolves with its release function. Refuses at once when saturated. */
  acquire(signal: AbortSignal): Promise<() => void> {
    if (this.running < this.options.maxConcurrent) return Promise.resolve(this.grant());
    if (this.queue.length >= this.options.maxQueue) {
      return Promise.reject(
        new GatewayError(
          429,
          "rate_limit_error",
          `Model '${this.model}' is at capacity (${this.options.maxConcurrent} running, ${this.options.maxQueue} queued).`,
          {
            code: "edge_saturated",
            headers: { "retry-after": String(this.options.retryAfterSeconds) },
          },
        ),
      );
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { resolve, reject };
      this.queue.push(waiter);
      signal.addEventListener(
        "abort",
        () => {
          const i = this.queue.indexOf(waiter);
          if (i >= 0) {
            this.queue.splice(i, 1);
            reject(new GatewayError(499, "invalid_request_error", "The client went away while queued.", { code: "client_closed" }));
          }
        },
        { once: true },
      );
    });
  }

  private grant(): () => void {
    this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      const next = this.queue.shift();
      if (next) next.resolve(this.grant());
    };
  }
}
