/**
 * The semantic store on Redis, shared by every replica (layout: `store-redis-layout.ts`). Entries
 * are hashes that Redis expires at their `expiresAt`; Redis bounds the total with its own
 * `maxmemory` policy. Each replica keeps only ids, scopes and vectors in its local index: it
 * rebuilds the index from Redis on start (SCAN), then follows the event stream from the id it
 * read before scanning, so nothing written meanwhile is missed; its own events come back too and
 * are no-ops. A lookup reads the candidates' entries from Redis; a candidate whose key is gone
 * (expired, evicted) is dropped from the local index and stays a miss.
 *
 * Redis trouble never fails a request: `nearest` answers `[]`, `insert` drops the write (logged
 * at debug); once Redis has failed, the store's `StoreHealth` (`semantic`) skips it, one try a
 * second, until it answers again (a frozen Redis costs one command timeout). When the follower loses Redis (down, restarted, stream lost) it retries every
 * 250 ms and rebuilds the index once Redis answers again.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Redis } from "ioredis";
import { redisReady } from "../../store/redis.ts";
import { StoreHealth } from "../../store/store-health.ts";
import type { Logger } from "../../../common/telemetry/logger.ts";
import { candidatesFor } from "./memory-semantic-store.ts";
import type { SemanticEntry, SemanticMatch, SemanticStore, SemanticStoreStats } from "./semantic-store.ts";
import { ExpiryQueue } from "./store-expiry-queue.ts";
import {
  ENTRY_FIELDS,
  INDEX_FIELDS,
  entryHash,
  entryKey,
  entryPattern,
  eventFields,
  parseEntry,
  parseEvent,
  parseIndexFields,
  streamKey,
  type StreamEvent,
} from "./store-redis-layout.ts";
import { bufferToVector, cosine, entryBytes } from "./store-vector.ts";
import type { VectorIndex } from "./vector-index.ts";

const RETRY_MS = 250;
const READ_COUNT = 512;
const SCAN_COUNT = 1_000;

export interface RedisSemanticStoreOptions {
  /** Lookups and writes go here (not owned: the caller closes it). A second connection, for the stream, is made from it. */
  redis: Redis;
  /** The local vector index; the store owns it from now on. */
  index: VectorIndex;
  logger: Logger;
  /** Key prefix; default `gearbox:`. */
  prefix?: string;
  /** The event stream's approximate length bound (XADD MAXLEN ~); default 100,000. */
  streamMaxLen?: number;
  /** How long one XREAD blocks, ms; default 1,000. */
  blockMs?: number;
  /** Whether lookups and writes may ask Redis now; one of its own when absent. */
  health?: StoreHealth;
  now?: () => number;
}

/** What the local index knows of an entry. */
interface Known {
  tenant: string;
  scope: string;
  expiresAt: number;
  bytes: number;
  /** The rebuild that last saw it: a rebuild drops what it did not see. */
  generation: number;
}

/** What the semantic store's transitions mean, for their log lines. */
export const SEMANTIC_MEANING = {
  degraded: "semantic-cache lookups are misses and answers are not stored until it answers",
  healthy: "the semantic cache is back",
};

export class RedisSemanticStore implements SemanticStore {
  private readonly redis: Redis;
  private readonly follower: Redis;
  private readonly index: VectorIndex;
  private readonly logger: Logger;
  private readonly prefix: string;
  private readonly stream: string;
  private readonly maxLen: number;
  private readonly blockMs: number;
  private readonly now: () => number;
  private readonly health: StoreHealth;
  private readonly known = new Map<string, Known>();
  private readonly expiries = new ExpiryQueue();
  private total = 0;
  private generation = 0;
  private lastId = "0-0";
  private needRebuild = true;
  private closed = false;
  private readonly following: Promise<void>;
  private markSynced: () => void = () => undefined;
  private readonly firstSync = new Promise<void>((resolve) => (this.markSynced = resolve));

  constructor(options: RedisSemanticStoreOptions) {
    this.redis = options.redis;
    this.index = options.index;
    this.logger = options.logger;
    this.prefix = options.prefix ?? "gearbox:";
    this.stream = streamKey(this.prefix);
    this.maxLen = options.streamMaxLen ?? 100_000;
    this.blockMs = options.blockMs ?? 1_000;
    this.now = options.now ?? Date.now;
    this.health = options.health ?? new StoreHealth("semantic", this.logger, { meaning: SEMANTIC_MEANING });
    // Blocking reads need a connection of their own, with a timeout longer than the block.
    this.follower = this.redis.duplicate({ commandTimeout: this.blockMs + 5_000, enableAutoPipelining: false, connectionName: "gearbox-semantic-follower" });
    this.follower.on("error", (err: Error) => this.logger.debug({ err: err.message }, "semantic store: follower connection error"));
    this.index.onReset(() => {
      // The index is empty: forget what it held and rebuild it from Redis.
      this.known.clear();
      this.expiries.clear();
      this.total = 0;
      this.needRebuild = true;
    });
    this.following = this.follow();
  }

  /** Resolves once the local index has been built from Redis the first time. */
  synced(): Promise<void> {
    return this.firstSync;
  }

  async nearest(scope: string, vector: Float32Array, k: number, minSimilarity: number): Promise<SemanticMatch[]> {
    if (this.closed || k < 1) return [];
    this.expire();
    const hits = (await this.index.search(scope, vector, candidatesFor(k))).filter((hit) => this.known.get(hit.id)?.scope === scope);
    if (hits.length === 0) return [];
    if (!this.health.mayTry()) {
      this.health.fellBack();
      return [];
    }
    let rows: (Buffer | null)[][];
    try {
      rows = await Promise.all(hits.map((hit) => this.redis.hmgetBuffer(entryKey(this.prefix, this.known.get(hit.id)!.tenant, hit.id), ...ENTRY_FIELDS)));
      this.health.succeeded();
    } catch (err) {
      this.logger.debug({ err: (err as Error).message }, "semantic store: redis lookup failed; no match");
      this.health.failed(err, "lookup");
      this.health.fellBack();
      return [];
    }
    const now = this.now();
    const matches: SemanticMatch[] = [];
    hits.forEach((hit, i) => {
      const entry = parseEntry(rows[i]!);
      if (!entry || entry.expiresAt <= now || entry.scope !== scope) {
        // Expired or evicted in Redis: the local index forgets it.
        this.forget(hit.id);
        return;
      }
      const similarity = cosine(vector, entry.vector);
      if (similarity >= minSimilarity) matches.push({ entry, similarity });
    });
    matches.sort((a, b) => b.similarity - a.similarity);
    matches.length = Math.min(matches.length, k);
    return matches;
  }

  async insert(entry: SemanticEntry): Promise<void> {
    if (this.closed) return;
    if (entry.vector.length !== this.index.dimensions) {
      this.logger.warn(
        { id: entry.id, dimensions: entry.vector.length, expected: this.index.dimensions },
        "semantic store: wrong vector dimensions; not stored",
      );
      return;
    }
    if (entry.expiresAt <= this.now()) return;
    const key = entryKey(this.prefix, entry.tenant, entry.id);
    const bytes = entryBytes(entry);
    if (!this.health.mayTry()) return this.health.fellBack();
    try {
      const results = await this.redis.multi().hset(key, entryHash(entry, bytes)).pexpireat(key, entry.expiresAt).exec();
      const failed = results === null ? new Error("MULTI aborted") : results.find(([err]) => err)?.[0];
      if (failed) throw failed;
      this.health.succeeded();
    } catch (err) {
      this.logger.debug({ err: (err as Error).message, id: entry.id }, "semantic store: redis write failed; not stored");
      this.health.failed(err, "insert");
      this.health.fellBack();
      return;
    }
    this.forget(entry.id);
    this.learn(entry.id, { tenant: entry.tenant, scope: entry.scope, expiresAt: entry.expiresAt, bytes, generation: this.generation }, entry.vector);
    await this.publish({ op: "insert", id: entry.id, tenant: entry.tenant, scope: entry.scope, expiresAt: entry.expiresAt, bytes });
  }

  async delete(id: string): Promise<void> {
    const known = this.known.get(id);
    if (!known) return;
    this.forget(id);
    try {
      await this.redis.del(entryKey(this.prefix, known.tenant, id));
    } catch (err) {
      this.logger.debug({ err: (err as Error).message, id }, "semantic store: redis delete failed; the entry lives until its TTL");
      return;
    }
    await this.publish({ op: "delete", id, tenant: known.tenant });
  }

  stats(): SemanticStoreStats {
    return { entries: this.known.size, bytes: this.total };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.follower.disconnect();
    await this.following;
    await this.index.close();
  }

  private async publish(event: StreamEvent): Promise<void> {
    try {
      await this.redis.xadd(this.stream, "MAXLEN", "~", this.maxLen, "*", ...eventFields(event));
    } catch (err) {
      this.logger.debug(
        { err: (err as Error).message, id: event.id },
        "semantic store: event not published; other replicas see the change at their next rebuild",
      );
    }
  }

  /** Follows the event stream until closed; any failure means a rebuild once Redis answers again. */
  private async follow(): Promise<void> {
    let failing = false;
    while (!this.closed) {
      try {
        if (this.needRebuild) {
          if (this.follower.status !== "ready") await redisReady(this.follower, this.blockMs);
          await this.rebuild();
          this.needRebuild = false;
          if (failing) this.logger.info({ entries: this.known.size }, "semantic store: Redis back; index rebuilt");
          failing = false;
          this.markSynced();
        }
        const reply = await this.follower.xread("COUNT", READ_COUNT, "BLOCK", this.blockMs, "STREAMS", this.stream, this.lastId);
        const events = reply?.[0]?.[1] ?? [];
        await this.apply(events);
        if (events.length === READ_COUNT && (await this.trimmedPast(this.lastId))) {
          this.logger.warn({ lastId: this.lastId }, "semantic store: the stream was trimmed past this replica; rebuilding the index");
          this.needRebuild = true;
        }
        this.expire();
      } catch (err) {
        if (this.closed) return;
        if (!failing) this.logger.warn({ err: (err as Error).message }, "semantic store: lost Redis; the index is rebuilt when it answers again");
        failing = true;
        this.needRebuild = true;
        await sleep(RETRY_MS);
      }
    }
  }

  /** Loads every entry in Redis into the index, drops what Redis no longer has, and sets where to follow the stream from. */
  private async rebuild(): Promise<void> {
    const generation = ++this.generation;
    const last = await this.follower.xrevrange(this.stream, "+", "-", "COUNT", 1);
    const from = last[0]?.[0] ?? "0-0";
    let cursor = "0";
    do {
      const [next, keys] = await this.follower.scan(cursor, "MATCH", entryPattern(this.prefix), "COUNT", SCAN_COUNT);
      cursor = next;
      const rows = await Promise.all(keys.map((key) => this.follower.hmgetBuffer(key, ...INDEX_FIELDS)));
      for (const row of rows) {
        const found = parseIndexFields(row);
        if (!found) continue;
        const known = this.known.get(found.id);
        if (known) known.generation = generation;
        else this.learn(found.id, { tenant: found.tenant, scope: found.scope, expiresAt: found.expiresAt, bytes: found.bytes, generation }, found.vector);
      }
    } while (cursor !== "0");
    for (const [id, known] of this.known) if (known.generation < generation) this.forget(id);
    this.lastId = from;
    this.logger.debug({ entries: this.known.size, from }, "semantic store: index rebuilt from Redis");
  }

  /** Applies stream events in order; the vectors of inserts not yet indexed are read first, in one pipeline. */
  private async apply(events: [id: string, fields: string[]][]): Promise<void> {
    const parsed = events.map(([, fields]) => parseEvent(fields));
    const vectors = await Promise.all(
      parsed.map((event) =>
        event?.op === "insert" && !this.known.has(event.id)
          ? this.follower.hgetBuffer(entryKey(this.prefix, event.tenant, event.id), "vector")
          : Promise.resolve(null),
      ),
    );
    parsed.forEach((event, i) => {
      if (!event) return;
      switch (event.op) {
        case "insert": {
          const buffer = vectors[i];
          const vector = buffer ? bufferToVector(buffer) : undefined;
          // Gone from Redis already (deleted, expired), or indexed meanwhile.
          if (!vector || this.known.has(event.id)) return;
          this.learn(
            event.id,
            { tenant: event.tenant, scope: event.scope, expiresAt: event.expiresAt, bytes: event.bytes, generation: this.generation },
            vector,
          );
          return;
        }
        case "delete":
          this.forget(event.id);
          return;
        default: {
          const unknown: never = event;
          throw new Error(`unknown semantic store event ${JSON.stringify(unknown)}`);
        }
      }
    });
    const lastEvent = events.at(-1);
    if (lastEvent) this.lastId = lastEvent[0];
  }

  /** Whether entries after `id` were trimmed from the stream (this replica fell more than MAXLEN behind). */
  private async trimmedPast(id: string): Promise<boolean> {
    const info = (await this.follower.call("XINFO", "STREAM", this.stream)) as unknown[];
    const at = info.indexOf("max-deleted-entry-id");
    const deleted = at >= 0 ? String(info[at + 1]) : "0-0";
    return compareIds(deleted, id) > 0;
  }

  private learn(id: string, known: Known, vector: Float32Array): void {
    if (known.expiresAt <= this.now() || vector.length !== this.index.dimensions) return;
    this.known.set(id, known);
    this.total += known.bytes;
    this.expiries.push(id, known.expiresAt);
    this.index.add(known.scope, id, vector);
  }

  private forget(id: string): void {
    const known = this.known.get(id);
    if (!known) return;
    this.known.delete(id);
    this.total -= known.bytes;
    this.index.remove(id);
  }

  private expire(): void {
    for (const [id, expiresAt] of this.expiries.due(this.now())) {
      if (this.known.get(id)?.expiresAt === expiresAt) this.forget(id);
    }
    if (this.expiries.length > 2 * this.known.size + 1024) {
      this.expiries.clear();
      for (const [id, known] of this.known) this.expiries.push(id, known.expiresAt);
    }
  }
}

/** Orders stream ids (`<ms>-<seq>`). */
function compareIds(a: string, b: string): number {
  const [am = 0n, as = 0n] = a.split("-").map(BigInt);
  const [bm = 0n, bs = 0n] = b.split("-").map(BigInt);
  return am !== bm ? (am < bm ? -1 : 1) : as === bs ? 0 : as < bs ? -1 : 1;
}
