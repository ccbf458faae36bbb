/**
 * Last good values of a Redis-backed read, so that shared state failing never fails a request.
 *
 * `get(key, read)` answers, in this order:
 *   1. a value read less than `freshMs` ago: as is, without reading (the normal hot path);
 *   2. while the store is degraded (`StoreHealth`), a value read less than `maxStaleMs` ago: at
 *      once, counted as a stale read; one background refresh per `probeEveryMs` tries Redis and
 *      brings the store back when it answers;
 *   3. otherwise a read (concurrent gets of one key share it), bounded by `readTimeoutMs` when
 *      there is a value to fall back on. If it fails or is late, the store turns degraded and a
 *      value read less than `maxStaleMs` ago is the answer. With none (never read, or older than
 *      the staleness bound) the read is the only chance: it gets the store's own timeout (the
 *      connection's command timeout), and its error is the answer (the caller fails closed).
 *      A late answer still updates the value when it arrives.
 *
 * Cases 1 and 2 answer synchronously (the value itself, not a promise: the hot path waits no
 * turn of the event loop); case 3 answers with the read's promise.
 *
 * `undefined` is a value like any other (a key that does not exist is remembered too). `forget`
 * drops a key's value and any read in flight, so a change made through this replica is never
 * overwritten by a read that started before it. At most `maxEntries` values are kept, least
 * recently refreshed first out.
 *
 * What it means: while Redis fails, each replica answers from what it last read, for at most
 * `maxStaleMs`; changes made meanwhile (on Redis, by another replica) are seen when Redis
 * answers this replica again.
 */
import type { Step } from "../../common/step.ts";
import { withDeadline } from "./deadline.ts";
import type { StoreHealth } from "./store-health.ts";

export interface LastGoodOptions {
  health: StoreHealth;
  /** A value younger than this is served without a read; default 5 s. */
  freshMs?: number;
  /** The oldest value served while the store fails; default 10 min. */
  maxStaleMs?: number;
  /** How long a read may take before the last good value answers instead; default 100 ms. */
  readTimeoutMs?: number;
  /** Values kept at most; default 10,000. */
  maxEntries?: number;
  /** Clock in ms (tests). */
  now?: () => number;
}

export const FRESH_MS = 5_000;
export const MAX_STALE_MS = 10 * 60_000;
export const READ_TIMEOUT_MS = 100;
const MAX_ENTRIES = 10_000;

interface Held<V> {
  value: V;
  /** When the read that returned it started. */
  at: number;
}

export class LastGood<K, V> {
  private readonly values = new Map<K, Held<V>>();
  private readonly reads = new Map<K, Promise<V>>();
  private readonly refreshing = new Set<K>();
  private readonly health: StoreHealth;
  private readonly freshMs: number;
  private readonly maxStaleMs: number;
  private readonly readTimeoutMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  /** Bumped by `forget`: a read that started before it does not store its answer. */
  private epoch = 0;

  constructor(options: LastGoodOptions) {
    this.health = options.health;
    this.freshMs = options.freshMs ?? FRESH_MS;
    this.maxStaleMs = options.maxStaleMs ?? MAX_STALE_MS;
    this.readTimeoutMs = options.readTimeoutMs ?? READ_TIMEOUT_MS;
    this.maxEntries = options.maxEntries ?? MAX_ENTRIES;
    this.now = options.now ?? Date.now;
  }

  get(key: K, read: () => Promise<V>): Step<V> {
    const at = this.now();
    const held = this.values.get(key);
    if (held && at - held.at < this.freshMs) return held.value;
    if (held && at - held.at > this.maxStaleMs) this.values.delete(key);
    const usable = held && at - held.at <= this.maxStaleMs ? held : undefined;
    if (usable && this.health.degraded) {
      this.health.staleRead();
      if (!this.refreshing.has(key) && this.health.mayTry()) this.refresh(key, read);
      return usable.value;
    }
    let pending = this.reads.get(key);
    if (!pending) {
      const reading = this.readNow(key, read, usable !== undefined);
      pending = reading;
      this.reads.set(key, reading);
      const done = (): void => {
        if (this.reads.get(key) === reading) this.reads.delete(key);
      };
      reading.then(done, done);
    }
    return pending;
  }

  /** Drops the value of `key` and any read of it in flight (after a change through this replica). */
  forget(key: K): void {
    this.epoch++;
    this.values.delete(key);
    this.reads.delete(key);
  }

  /** Drops every value (after a change through this replica that touches them all). */
  clear(): void {
    this.epoch++;
    this.values.clear();
    this.reads.clear();
  }

  get size(): number {
    return this.values.size;
  }

  private async readNow(key: K, read: () => Promise<V>, canFallBack: boolean): Promise<V> {
    try {
      const reading = this.start(key, read);
      const value = await (canFallBack ? withDeadline(reading, this.readTimeoutMs) : reading);
      this.health.succeeded();
      return value;
    } catch (err) {
      this.health.failed(err, "read");
      // The last good value (none if forgotten meanwhile) answers.
      const held = this.values.get(key);
      if (held && this.now() - held.at <= this.maxStaleMs) {
        this.health.staleRead();
        return held.value;
      }
      throw err;
    }
  }

  private refresh(key: K, read: () => Promise<V>): void {
    this.refreshing.add(key);
    withDeadline(this.start(key, read), this.readTimeoutMs)
      .then(
        () => this.health.succeeded(),
        (err: unknown) => this.health.failed(err, "refresh"),
      )
      .finally(() => this.refreshing.delete(key));
  }

  /** Reads `key` and keeps the answer, however late, unless `forget` came first. */
  private start(key: K, read: () => Promise<V>): Promise<V> {
    const epoch = this.epoch;
    const at = this.now();
    let reading: Promise<V>;
    try {
      reading = read();
    } catch (err) {
      reading = Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    return reading.then((value) => {
      if (epoch === this.epoch) this.keep(key, { value, at });
      return value;
    });
  }

  private keep(key: K, held: Held<V>): void {
    const current = this.values.get(key);
    // A slower, older read does not overwrite a newer answer.
    if (current && current.at > held.at) return;
    this.values.delete(key);
    if (this.values.size >= this.maxEntries) {
      // Map keeps insertion order: the first value is the least recently read.
      const oldest = this.values.keys().next();
      if (!oldest.done) this.values.delete(oldest.value);
    }
    this.values.set(key, held);
  }
}
