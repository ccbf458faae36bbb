/**
 * How a call is stopped before it ends (the client left, a deadline passed): what can stop it
 * (`Abortable`: an `AbortSignal`, or a `CallAbort`; only the abort event is listened to).
 */
export interface Abortable {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/**
 * One call's abort, for the front door's path: an `AbortController`'s signal costs an
 * `EventTarget` per request and a listener object per `addEventListener` (~2 % of a proxied
 * request's CPU), while a call has at most a few listeners and is aborted rarely (the client
 * left, the provider timed out). Listeners run once, in the order added; the first reason wins.
 */
export class CallAbort implements Abortable {
  aborted = false;
  reason: unknown = undefined;
  private listeners: (() => void)[] = [];

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) listener();
  }

  addEventListener(_type: "abort", listener: () => void): void {
    if (!this.aborted) this.listeners.push(listener);
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    const i = this.listeners.indexOf(listener);
    if (i >= 0) this.listeners.splice(i, 1);
  }
}
