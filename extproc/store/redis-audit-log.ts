/**
 * `AuditLog` as a Redis Stream (`<prefix>audit`): `XADD` to append, `XREVRANGE` to read. Nothing
 * here trims, edits or deletes; stream ids (`<ms>-<seq>`) are the entries' ids.
 */
import type { AuditEntry } from "../governance/model.ts";
import { pageSize, type AuditLog, type AuditQuery, type AuditRecord } from "./audit-log.ts";
import type { Redis } from "ioredis";

export class RedisAuditLog implements AuditLog {
  private readonly stream: string;

  constructor(
    private readonly redis: Redis,
    prefix = "gbx:",
  ) {
    this.stream = `${prefix}audit`;
  }

  async append(entry: AuditEntry): Promise<string> {
    const id = await this.redis.xadd(this.stream, "*", "entry", JSON.stringify(entry));
    if (id === null) throw new Error(`XADD to ${this.stream} returned no id`);
    return id;
  }

  async list(query: AuditQuery = {}): Promise<AuditRecord[]> {
    const end = query.before === undefined ? "+" : `(${query.before}`;
    const rows = await this.redis.xrevrange(this.stream, end, "-", "COUNT", pageSize(query));
    return rows.map(([id, fields]) => ({ ...(JSON.parse(fields[1] ?? "{}") as AuditEntry), id }));
  }
}
