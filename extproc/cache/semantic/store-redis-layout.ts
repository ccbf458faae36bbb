/**
 * How the Redis semantic store lays out its data. Cluster-ready: an entry's key carries its
 * tenant's hash tag; the event stream is one key of its own.
 *
 * - `<prefix>{t:<tenant>}:sc:<id>`: a hash per entry (fields below; `vector` is little-endian
 *   float32 bytes), expiring at the entry's `expiresAt` (PEXPIREAT).
 * - `<prefix>sc:events`: a stream of `insert` (id, tenant, scope, exp, bytes) and `delete` (id,
 *   tenant) events, trimmed with `MAXLEN ~`, that every replica's index follows.
 */
import type { SemanticEntry } from "./semantic-store.ts";
import { bufferToVector, vectorToBuffer } from "./store-vector.ts";

/** The hash fields an index needs (rebuild). */
export const INDEX_FIELDS = ["id", "tenant", "scope", "expiresAt", "bytes", "vector"] as const;
/** The hash fields of a whole entry (lookup). */
export const ENTRY_FIELDS = ["id", "tenant", "scope", "question", "completion", "createdAt", "expiresAt", "vector"] as const;

export function entryKey(prefix: string, tenant: string, id: string): string {
  return `${prefix}{t:${tenant}}:sc:${id}`;
}

/** SCAN pattern matching every entry key under `prefix`. */
export function entryPattern(prefix: string): string {
  return `${prefix}{t:*}:sc:*`;
}

export function streamKey(prefix: string): string {
  return `${prefix}sc:events`;
}

export function entryHash(entry: SemanticEntry, bytes: number): Record<string, string | Buffer> {
  return {
    id: entry.id,
    tenant: entry.tenant,
    scope: entry.scope,
    question: entry.question,
    completion: entry.completion,
    createdAt: String(entry.createdAt),
    expiresAt: String(entry.expiresAt),
    bytes: String(bytes),
    vector: vectorToBuffer(entry.vector),
  };
}

/** What the index keeps of an entry, read from `INDEX_FIELDS`; `undefined` if the key is gone or malformed. */
export function parseIndexFields(
  row: (Buffer | null)[],
): { id: string; tenant: string; scope: string; expiresAt: number; bytes: number; vector: Float32Array } | undefined {
  const [id, tenant, scope, expiresAt, bytes, vector] = row;
  if (!id || !tenant || !scope || !expiresAt || !bytes || !vector) return undefined;
  const parsed = bufferToVector(vector);
  if (!parsed) return undefined;
  return { id: id.toString(), tenant: tenant.toString(), scope: scope.toString(), expiresAt: Number(expiresAt), bytes: Number(bytes), vector: parsed };
}

/** The entry read from `ENTRY_FIELDS`; `undefined` if the key is gone (expired, evicted, deleted) or malformed. */
export function parseEntry(row: (Buffer | null)[]): SemanticEntry | undefined {
  const [id, tenant, scope, question, completion, createdAt, expiresAt, vector] = row;
  if (!id || !tenant || !scope || !question || !completion || !createdAt || !expiresAt || !vector) return undefined;
  const parsed = bufferToVector(vector);
  if (!parsed) return undefined;
  return {
    id: id.toString(),
    tenant: tenant.toString(),
    scope: scope.toString(),
    vector: parsed,
    question: question.toString(),
    completion: completion.toString(),
    createdAt: Number(createdAt),
    expiresAt: Number(expiresAt),
  };
}

export type StreamEvent =
  { op: "insert"; id: string; tenant: string; scope: string; expiresAt: number; bytes: number } | { op: "delete"; id: string; tenant: string };

export function eventFields(event: StreamEvent): string[] {
  switch (event.op) {
    case "insert":
      return ["op", "insert", "id", event.id, "tenant", event.tenant, "scope", event.scope, "exp", String(event.expiresAt), "bytes", String(event.bytes)];
    case "delete":
      return ["op", "delete", "id", event.id, "tenant", event.tenant];
    default: {
      const unknown: never = event;
      throw new Error(`unknown semantic store event ${JSON.stringify(unknown)}`);
    }
  }
}

/** A stream entry's fields as an event; `undefined` for an entry this version does not know. */
export function parseEvent(fields: string[]): StreamEvent | undefined {
  const f = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i]!, fields[i + 1]!);
  const id = f.get("id");
  const tenant = f.get("tenant");
  if (!id || !tenant) return undefined;
  const op = f.get("op") ?? "";
  switch (op) {
    case "insert": {
      const scope = f.get("scope");
      const expiresAt = Number(f.get("exp"));
      const bytes = Number(f.get("bytes"));
      if (!scope || !Number.isFinite(expiresAt) || !Number.isFinite(bytes)) return undefined;
      return { op: "insert", id, tenant, scope, expiresAt, bytes };
    }
    case "delete":
      return { op: "delete", id, tenant };
    default:
      return undefined;
  }
}
