/**
 * The exact cache's key: SHA-256 over a canonical JSON (object keys sorted) of the tenant and
 * everything in a chat request that shapes the answer — the client-facing model, every message
 * (system prompt included), tools and `tool_choice`, `response_format`, the sampling parameters
 * and any field Gearbox passes through unmodelled. Left out: `stream` and `stream_options` (a
 * streamed and a plain request share an entry), `user` and `metadata` (labels, not inputs).
 */
import { createHash } from "node:crypto";
import type { ChatRequest } from "../../common/canonical/types.ts";
import type { CacheKey } from "./response-cache.ts";

/** Request fields that do not change the answer. */
const NOT_KEYED = new Set<keyof ChatRequest>(["stream", "includeUsage", "user", "metadata"]);

export function cacheKey(tenant: string, request: ChatRequest): CacheKey {
  const keyed: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(request)) {
    if (!NOT_KEYED.has(field as keyof ChatRequest)) keyed[field] = value;
  }
  const hash = createHash("sha256")
    .update(canonicalJson({ tenant, request: keyed }))
    .digest("hex");
  return { tenant, hash };
}

/**
 * Whether a request asks for a repeatable answer: `temperature: 0` or a `seed`. Others sample
 * (OpenAI's default temperature is 1): caching them would replay one draw forever, so they are
 * cached only when the operator says so (`cache.exact.any_temperature`).
 */
export function cacheable(request: ChatRequest, anyTemperature: boolean): boolean {
  return anyTemperature || request.temperature === 0 || request.seed !== undefined;
}

/** JSON with object keys in sorted order at every depth; `undefined` fields are dropped. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const fields = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`);
    return `{${fields.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
