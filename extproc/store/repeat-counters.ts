/**
 * Counters of identical requests for the in-memory limiter (the runaway check's `repeat`
 * checks): one per distinct request — on embedded defaults, one per request served in the window.
 *
 * Kept in two generations at least as long as the longest window counted. A counter lives in
 * the generation it started in; a generation is dropped whole once the one after it has been
 * current for a full span, when every counter in it has expired. No sweep per admission: memory
 * is at most two spans of distinct requests.
 *
 * A generation is an open-addressing table in typed arrays, keyed by a 64-bit hash of the key:
 * no string, object or map entry per counter on the JavaScript heap. Held as a `Map` of strings
 * to objects, the counters were nine tenths of what the old generation grew by at sixteen
 * clients (1.1 MB a second at ~4,300 requests a second; bench/RESULTS.md, issue 25), promoted by
 * every scavenge and marked by every full collection; now the old generation grows ~0.13 MB a
 * second there, as with the runaway check off. Two keys whose hashes collide count together:
 * with 64 bits, about one chance in 10^10 among the 60,000 counters of two 10 s windows at 3,000
 * requests a second; and a runaway key holds its caller's scope, so a collision could only join
 * two requests of one caller.
 */

/** A live counter: identical requests so far, and when its window ends. */
export interface Repeat {
  count: number;
  expiresAt: number;
}

const MIN_CAPACITY = 1024;

/** The two 32-bit halves of `hashKey`'s last result (no pair allocated per call), and its key. */
let hashHigh = 0;
let hashLow = 0;
let hashed: string | undefined;

/**
 * A 64-bit hash of a string in two 32-bit lanes (cyrb53's mixing, both lanes kept whole):
 * not cryptographic, well spread; ~130–170 ns for a runaway key of 55 characters.
 */
export function hashKey(key: string): void {
  // An admission looks a key up, then counts it: the second call finds it hashed.
  if (key === hashed) return;
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  hashHigh = h1 >>> 0;
  hashLow = h2 >>> 0;
  hashed = key;
}

/** One generation: linear probing over a power-of-two table, at most half full; a count of 0 marks a free slot. */
class CounterTable {
  size = 0;
  private mask: number;
  private high: Uint32Array;
  private low: Uint32Array;
  private counts: Uint32Array;
  private expires: Float64Array;

  constructor(capacity: number) {
    this.mask = capacity - 1;
    this.high = new Uint32Array(capacity);
    this.low = new Uint32Array(capacity);
    this.counts = new Uint32Array(capacity);
    this.expires = new Float64Array(capacity);
  }

  /** The slot of the hashed key (`hashHigh`, `hashLow`), or of the free slot where it would go. */
  slot(): number {
    const { high, low, counts, mask } = this;
    let i = (hashHigh ^ hashLow) & mask;
    while (counts[i] !== 0 && (high[i] !== hashHigh || low[i] !== hashLow)) i = (i + 1) & mask;
    return i;
  }

  count(at: number): number {
    return this.counts[at] ?? 0;
  }

  expiresAt(at: number): number {
    return this.expires[at] ?? 0;
  }

  increment(at: number): void {
    this.counts[at] = (this.counts[at] ?? 0) + 1;
  }

  /** The counter at `at` started again: 1, a new window. */
  restart(at: number, expiresAt: number): void {
    this.counts[at] = 1;
    this.expires[at] = expiresAt;
  }

  /** A new counter of 1 for the hashed key, whose free slot is `at`. */
  add(at: number, expiresAt: number): void {
    if (2 * (this.size + 1) > this.counts.length) {
      this.grow();
      at = this.slot();
    }
    this.high[at] = hashHigh;
    this.low[at] = hashLow;
    this.counts[at] = 1;
    this.expires[at] = expiresAt;
    this.size++;
  }

  private grow(): void {
    const { high, low, counts, expires } = this;
    const capacity = counts.length * 2;
    this.mask = capacity - 1;
    this.high = new Uint32Array(capacity);
    this.low = new Uint32Array(capacity);
    this.counts = new Uint32Array(capacity);
    this.expires = new Float64Array(capacity);
    const [keptHigh, keptLow] = [hashHigh, hashLow];
    for (let i = 0; i < counts.length; i++) {
      if (counts[i] === 0) continue;
      hashHigh = high[i] ?? 0;
      hashLow = low[i] ?? 0;
      const to = this.slot();
      this.high[to] = hashHigh;
      this.low[to] = hashLow;
      this.counts[to] = counts[i] ?? 0;
      this.expires[to] = expires[i] ?? 0;
    }
    [hashHigh, hashLow] = [keptHigh, keptLow];
  }
}

/** A table sized for `expected` counters without growing. */
const tableFor = (expected: number): CounterTable => {
  let capacity = MIN_CAPACITY;
  while (capacity < 2 * expected) capacity *= 2;
  return new CounterTable(capacity);
};

export class RepeatCounters {
  private current = tableFor(0);
  private previous: CounterTable | undefined;
  /** When `current` became current. */
  private startedAt = 0;
  /** The longest window counted so far: a generation's length. */
  private span = 0;

  /** The live counter of `key` (its window not over at `now`); a new object for each call that finds one. */
  get(key: string, now: number): Repeat | undefined {
    this.rotate(now);
    hashKey(key);
    let table = this.current;
    let at = table.slot();
    if (table.count(at) === 0) {
      if (this.previous === undefined) return undefined;
      table = this.previous;
      at = table.slot();
      if (table.count(at) === 0) return undefined;
    }
    const expiresAt = table.expiresAt(at);
    return expiresAt > now ? { count: table.count(at), expiresAt } : undefined;
  }

  /** One more identical request: its live counter, or a new one whose window starts `now`. */
  count(key: string, windowMs: number, now: number): void {
    if (windowMs > this.span) this.span = windowMs;
    this.rotate(now);
    hashKey(key);
    const current = this.current;
    const at = current.slot();
    if (current.count(at) !== 0) {
      // Held in this generation: counted on while live, started again once expired.
      if (current.expiresAt(at) > now) current.increment(at);
      else current.restart(at, now + windowMs);
      return;
    }
    const previous = this.previous;
    if (previous !== undefined) {
      const before = previous.slot();
      if (previous.count(before) !== 0 && previous.expiresAt(before) > now) return previous.increment(before);
    }
    current.add(at, now + windowMs);
  }

  /** Counters held, live or not yet dropped. */
  get size(): number {
    return this.current.size + (this.previous?.size ?? 0);
  }

  private rotate(now: number): void {
    if (this.span === 0) return;
    // A clock stepped back restarts the generation: rotation is never held off for longer than a span.
    if (now < this.startedAt) this.startedAt = now;
    const age = now - this.startedAt;
    if (age < this.span) return;
    // Idle for two spans or more: nothing held is live.
    this.previous = age >= 2 * this.span ? undefined : this.current;
    this.current = tableFor(this.previous?.size ?? 0);
    this.startedAt = now;
  }
}
