/** `AuditLog` in process memory (the embedded default): an array only ever pushed to. */
import type { AuditEntry } from "../governance/model.ts";
import { pageSize, type AuditLog, type AuditQuery, type AuditRecord } from "./audit-log.ts";

export class MemoryAuditLog implements AuditLog {
  private readonly entries: AuditRecord[] = [];

  append(entry: AuditEntry): Promise<string> {
    const id = String(this.entries.length + 1);
    this.entries.push(structuredClone({ ...entry, id }));
    return Promise.resolve(id);
  }

  list(query: AuditQuery = {}): Promise<AuditRecord[]> {
    // Ids are positions from 1, so "older than id n" is the first n - 1 entries.
    const before = query.before === undefined ? this.entries.length + 1 : Number.parseInt(query.before, 10);
    const end = Number.isNaN(before) ? 0 : Math.min(Math.max(before - 1, 0), this.entries.length);
    const page = this.entries.slice(Math.max(end - pageSize(query), 0), end).reverse();
    return Promise.resolve(structuredClone(page));
  }
}
