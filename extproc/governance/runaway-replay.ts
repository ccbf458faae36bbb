/**
 * The runaway replay memo: the answers a process last gave to callers that are repeating
 * themselves, so that a repeat past `runaway.max_identical` is answered with them instead of
 * being refused (a loop then costs nothing and nobody is refused).
 *
 * Only the request a window admits last (the one that leaves no identical request to spare) is
 * recorded: `expect(fingerprint)` when it is admitted, then `keep` with its clean 200 answer, or
 * `drop` when it failed. A repeat asks `answer(fingerprint)`: the kept answer, or — while the
 * recorded request is still in flight — a promise of it (resolved by `keep`/`drop`, or with
 * nothing after `windowMs`). Nothing kept → the repeat is refused as before.
 *
 * Bounded: at most `maxEntries` answers and `maxBytes` bytes (the oldest go first; an answer over
 * a quarter of `maxBytes` is not kept), each for `windowMs`. Keyed by the caller fingerprint
 * (`callerFingerprint`: tenant, caller, endpoint, model, streaming and the body), so
 * an answer is only ever replayed to the caller that got it, in the form it asked for. The memo
 * is per process: a repeat that reaches another replica than its recorded request is refused.
 */

/** A complete answer as the client received it. */
export interface ReplayAnswer {
  contentType: string;
  body: Buffer;
}

export interface ReplayOptions {
  windowMs: number;
  maxEntries: number;
  maxBytes: number;
}

/** The recording of one admitted request's answer; the first of `keep`/`drop` wins. */
export interface Recording {
  keep(answer: ReplayAnswer): void;
  drop(): void;
}

interface Entry {
  answer: ReplayAnswer;
  size: number;
  expiresAt: number;
}

interface Pending {
  promise: Promise<ReplayAnswer | undefined>;
  settle(answer: ReplayAnswer | undefined): void;
}

export class RunawayReplays {
  /** Insertion order is age order (every entry lives `windowMs`): the first is the oldest. */
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Pending>();
  private bytesHeld = 0;

  constructor(
    private readonly options: ReplayOptions,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Answers held. */
  get size(): number {
    return this.entries.size;
  }

  /** Bytes held (bodies and content types). */
  get bytes(): number {
    return this.bytesHeld;
  }

  /** Requests in flight whose answer is awaited for replay. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** The request with `fingerprint` was admitted as its window's last: record its answer. */
  expect(fingerprint: string): Recording {
    let settled = false;
    let resolve: (answer: ReplayAnswer | undefined) => void = () => undefined;
    const promise = new Promise<ReplayAnswer | undefined>((r) => (resolve = r));
    const timer = setTimeout(() => pending.settle(undefined), this.options.windowMs);
    timer.unref();
    const pending: Pending = {
      promise,
      settle: (answer) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (this.pending.get(fingerprint) === pending) this.pending.delete(fingerprint);
        resolve(answer);
      },
    };
    this.pending.get(fingerprint)?.settle(undefined);
    this.pending.set(fingerprint, pending);
    return {
      keep: (answer) => {
        if (settled) return;
        pending.settle(this.put(fingerprint, answer) ? answer : undefined);
      },
      drop: () => pending.settle(undefined),
    };
  }

  /** The answer to replay for a repeat of `fingerprint`: kept, awaited (in flight), or none. */
  answer(fingerprint: string): ReplayAnswer | Promise<ReplayAnswer | undefined> | undefined {
    const entry = this.entries.get(fingerprint);
    if (entry && entry.expiresAt > this.now()) return entry.answer;
    if (entry) this.remove(fingerprint, entry);
    return this.pending.get(fingerprint)?.promise;
  }

  private put(fingerprint: string, answer: ReplayAnswer): boolean {
    const size = answer.body.length + answer.contentType.length;
    if (size > this.options.maxBytes / 4) return false;
    const old = this.entries.get(fingerprint);
    if (old) this.remove(fingerprint, old);
    const now = this.now();
    this.entries.set(fingerprint, { answer, size, expiresAt: now + this.options.windowMs });
    this.bytesHeld += size;
    for (const [key, entry] of this.entries) {
      const over = this.entries.size > this.options.maxEntries || this.bytesHeld > this.options.maxBytes;
      if (!over && entry.expiresAt > now) break;
      this.remove(key, entry);
    }
    return true;
  }

  private remove(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.bytesHeld -= entry.size;
  }
}
