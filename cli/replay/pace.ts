/**
 * When each request of a replay goes: as soon as a slot is free (fixed concurrency), at a fixed
 * rate, or at the file's own timestamps sped up. In-flight requests are always capped by the
 * concurrency, so a slow target slows the replay instead of piling requests up.
 */
import { setTimeout as sleep } from "node:timers/promises";

export type Pace = { kind: "concurrency" } | { kind: "rate"; perSecond: number } | { kind: "timing"; speed: number };

export class Pacer {
  private inFlight = 0;
  private sent = 0;
  private readonly started = performance.now();
  private firstTimestamp: number | undefined;
  private lastTimestamp: number | undefined;
  private readonly idle: (() => void)[] = [];

  constructor(
    private readonly pace: Pace,
    private readonly concurrency: number,
  ) {}

  /** Waits until request with `timestamp` (epoch ms, when the file has one) may go. */
  async turn(timestamp: number | undefined, stopped: () => boolean): Promise<void> {
    while (this.inFlight >= this.concurrency) await new Promise<void>((resolve) => this.idle.push(resolve));
    const at = this.dueAt(timestamp);
    while (!stopped()) {
      const wait = at - performance.now();
      if (wait <= 0) break;
      // Short naps, so that a stop is heard while waiting for a far timestamp.
      await sleep(Math.min(wait, 200));
    }
    this.sent++;
  }

  private dueAt(timestamp: number | undefined): number {
    switch (this.pace.kind) {
      case "concurrency":
        return 0;
      case "rate":
        return this.started + (this.sent * 1000) / this.pace.perSecond;
      case "timing": {
        // A line without a timestamp goes with the one before it.
        const t = timestamp ?? this.lastTimestamp;
        if (t === undefined) return 0;
        this.firstTimestamp ??= t;
        this.lastTimestamp = t;
        return this.started + Math.max(0, t - this.firstTimestamp) / this.pace.speed;
      }
      default: {
        const never: never = this.pace;
        throw new Error(`unknown pace ${JSON.stringify(never)}`);
      }
    }
  }

  /** Runs `work` in a slot. */
  run(work: () => Promise<void>): Promise<void> {
    this.inFlight++;
    return work().finally(() => {
      this.inFlight--;
      this.idle.shift()?.();
    });
  }
}
