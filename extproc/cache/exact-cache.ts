/**
 * The exact cache as the processor uses it: which requests look up (and under what key), the
 * immediate response a hit becomes, and what of a completed answer is stored.
 */
import type { GatewayConfig } from "../config/load.ts";
import type { ParsedCall } from "../endpoints/spec.ts";
import type { ErrorResponse } from "../../common/errors.ts";
import { sseFromCompletion } from "../../common/schemas/sse-from-completion.ts";
import { isObject } from "../../common/schemas/fields.ts";
import { cacheable, cacheKey } from "./cache-key.ts";
import type { CacheKey, ResponseCache } from "./response-cache.ts";

/** What the cache does for a request: look up under `key`, or stay out of it (`bypass`). */
export type CacheUse = { kind: "lookup"; key: CacheKey } | { kind: "bypass" };

/**
 * The cache's part in a request, or `undefined` when it has none: the cache is off, the call is
 * not an OpenAI chat completion, or it does not ask for a repeatable answer. The client's
 * `x-gearbox-cache: bypass` neither reads nor writes the cache.
 */
export function cacheUse(config: GatewayConfig, endpoint: string, parsed: ParsedCall, tenant: string, header: string | undefined): CacheUse | undefined {
  const options = config.cache.exact;
  if (!options.enable || endpoint !== "chat_completions" || parsed.call.endpoint !== "chat") return undefined;
  if (header?.trim().toLowerCase() === "bypass") return { kind: "bypass" };
  const request = parsed.call.request;
  return cacheable(request, options.any_temperature) ? { kind: "lookup", key: cacheKey(tenant, request) } : undefined;
}

/**
 * A hit as the client's answer: the stored completion, or — for a streamed request — the same
 * completion as an OpenAI SSE stream (with a usage chunk only if `stream_options.include_usage`).
 */
export function hitResponse(completion: string, parsed: ParsedCall, requestId: string): ErrorResponse {
  const headers = { "x-gearbox-route": "cache", "x-gearbox-cache": "hit", "x-gearbox-request-id": requestId };
  if (!parsed.stream) return { status: 200, headers: Object.assign({}, headers, { "content-type": "application/json" }), body: Buffer.from(completion) };
  const includeUsage = parsed.call.endpoint === "chat" && parsed.call.request.includeUsage === true;
  const parsedCompletion: unknown = JSON.parse(completion);
  const body = sseFromCompletion(isObject(parsedCompletion) ? parsedCompletion : {}, includeUsage);
  return { status: 200, headers: Object.assign({}, headers, { "content-type": "text/event-stream", "cache-control": "no-cache" }), body };
}

/**
 * Stores a completed answer (OpenAI chat completion JSON) when it is one — an object with
 * choices — and within `max_entry_bytes`. Fire and forget: the store never fails a request.
 */
export function storeAnswer(cache: ResponseCache, config: GatewayConfig, key: CacheKey, completion: string): void {
  const options = config.cache.exact;
  if (Buffer.byteLength(completion) > options.max_entry_bytes) return;
  let json: unknown;
  try {
    json = JSON.parse(completion);
  } catch {
    return;
  }
  if (!isObject(json) || !Array.isArray(json.choices) || json.choices.length === 0) return;
  void cache.put(key, { completion }, options.ttl_ms);
}
