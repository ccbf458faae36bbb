/**
 * Conversations on Redis, shared by every replica. One conversation is two keys with the
 * tenant as hash tag, so both live on one Cluster slot and one `MULTI` or script covers them:
 *
 *   <prefix>conv:{<tenant>}:<id>:m   list of messages (JSON), oldest first
 *   <prefix>conv:{<tenant>}:<id>:h   hash: dropped, target, summary_through, summary (JSON)
 *
 * `append` is one `MULTI` (RPUSH of the whole exchange, HSET, PEXPIRE): concurrent exchanges
 * never interleave. `compact` and `saveSummary` are scripts that check what they replace. Every
 * write renews the time to live of both keys.
 */
import type { Redis } from "ioredis";
import type { Message } from "../../common/canonical/types.ts";
import type { ConversationLimits, ConversationStore, ConversationSummary, ConversationTarget, StoredConversation } from "./store.ts";

/** KEYS: list, hash. ARGV: expected dropped, through, summary JSON, ttl ms, 1 when the summary is a model's. Returns 1 when compacted. */
const COMPACT = `
local dropped = tonumber(redis.call('HGET', KEYS[2], 'dropped') or '0')
if dropped ~= tonumber(ARGV[1]) then return 0 end
local through = tonumber(ARGV[2])
if through <= dropped then return 0 end
local remove = math.min(through - dropped, redis.call('LLEN', KEYS[1]))
if remove > 0 then redis.call('LTRIM', KEYS[1], remove, -1) end
redis.call('HSET', KEYS[2], 'dropped', dropped + remove, 'summary_through', through, 'summary', ARGV[3], 'summary_model', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1
`;

/**
 * KEYS: list, hash. ARGV: through, summary JSON, 1 when the summary is a model's (0: extractive).
 * Saves the summary when it covers more than the stored one, or as many when the stored one is
 * extractive and this one a model's.
 */
const SAVE_SUMMARY = `
if redis.call('EXISTS', KEYS[1]) == 0 and redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
local current = tonumber(redis.call('HGET', KEYS[2], 'summary_through') or '-1')
local through = tonumber(ARGV[1])
local rewritten = redis.call('HGET', KEYS[2], 'summary_model') == '1'
if through < current or (through == current and (ARGV[3] ~= '1' or rewritten)) then return 0 end
redis.call('HSET', KEYS[2], 'summary_through', ARGV[1], 'summary', ARGV[2], 'summary_model', ARGV[3])
return 1
`;

export class RedisConversationStore implements ConversationStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly limits: Pick<ConversationLimits, "ttlMs">,
  ) {}

  async get(tenant: string, id: string): Promise<StoredConversation | undefined> {
    const { list, hash } = this.keys(tenant, id);
    const [messages, meta] = await Promise.all([this.redis.lrange(list, 0, -1), this.redis.hgetall(hash)]);
    if (messages.length === 0 && Object.keys(meta).length === 0) return undefined;
    const target = meta.target === "edge" || meta.target === "cloud" ? meta.target : undefined;
    const summary = meta.summary ? (JSON.parse(meta.summary) as ConversationSummary) : undefined;
    return {
      messages: messages.map((m) => JSON.parse(m) as Message),
      dropped: Number(meta.dropped ?? 0),
      ...(target && { lastTarget: target }),
      ...(summary && { summary }),
    };
  }

  async append(tenant: string, id: string, messages: readonly Message[], target: ConversationTarget): Promise<void> {
    const { list, hash } = this.keys(tenant, id);
    const ttl = this.limits.ttlMs;
    const multi = this.redis.multi();
    if (messages.length > 0) multi.rpush(list, ...messages.map((m) => JSON.stringify(m)));
    multi.hset(hash, "target", target);
    multi.pexpire(list, ttl);
    multi.pexpire(hash, ttl);
    const results = await multi.exec();
    const failed = results?.find(([err]) => err);
    if (!results || failed) throw failed?.[0] ?? new Error("conversation append was aborted");
  }

  async saveSummary(tenant: string, id: string, summary: ConversationSummary): Promise<void> {
    const { list, hash } = this.keys(tenant, id);
    await this.redis.eval(SAVE_SUMMARY, 2, list, hash, String(summary.through), JSON.stringify(summary), summary.by === "extractive" ? "0" : "1");
  }

  async compact(tenant: string, id: string, expectedDropped: number, summary: ConversationSummary): Promise<boolean> {
    const { list, hash } = this.keys(tenant, id);
    const done = await this.redis.eval(
      COMPACT,
      2,
      list,
      hash,
      String(expectedDropped),
      String(summary.through),
      JSON.stringify(summary),
      String(this.limits.ttlMs),
      summary.by === "extractive" ? "0" : "1",
    );
    return done === 1;
  }

  async delete(tenant: string, id: string): Promise<boolean> {
    const { list, hash } = this.keys(tenant, id);
    return (await this.redis.del(list, hash)) > 0;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private keys(tenant: string, id: string): { list: string; hash: string } {
    // The tenant is the hash tag; encoded so that no brace or colon in it can move the tag or the key.
    const base = `${this.prefix}conv:{${encodeURIComponent(tenant)}}:${id}`;
    return { list: `${base}:m`, hash: `${base}:h` };
  }
}
