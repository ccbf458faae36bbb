/**
 * The append-only audit log: who did what, when, from where, with what result. The interface has
 * no way to change or remove an entry, and no implementation trims: retention is an operator's
 * decision (e.g. `XTRIM` run by hand on the Redis Stream), never the API's.
 *
 * Implementations: `memory-audit-log.ts` (one process), `redis-audit-log.ts` (a Redis Stream).
 */
import type { AuditEntry } from "../governance/model.ts";

/** An entry with the id the log gave it (increasing; opaque to callers). */
export interface AuditRecord extends AuditEntry {
  id: string;
}

export interface AuditQuery {
  /** At most this many entries (default 100, at most 1000). */
  limit?: number;
  /** Only entries older than this id (the last id of the previous page). */
  before?: string;
}

export interface AuditLog {
  /** Appends one entry; returns its id. */
  append(entry: AuditEntry): Promise<string>;
  /** Entries newest first. */
  list(query?: AuditQuery): Promise<AuditRecord[]>;
}

const AUDIT_PAGE_DEFAULT = 100;
export const AUDIT_PAGE_MAX = 1000;

/** The page size a query asks for, within bounds. */
export function pageSize(query: AuditQuery): number {
  return Math.min(Math.max(Math.trunc(query.limit ?? AUDIT_PAGE_DEFAULT), 1), AUDIT_PAGE_MAX);
}
