/**
 * Which of a provider's response headers reach the client. Gearbox calls providers with its own
 * key, so what a provider says back in headers is about Gearbox's account, not the caller's:
 * only an allowlist goes on, and any value holding the key (an upstream that echoes it, a debug
 * header) is redacted. Both transports apply it through the processor's response-headers answer
 * (a header mutation for Envoy, the same mutation applied by the front door).
 *
 * Forwarded:
 * - the body's own description: `content-type`, `content-length`, `content-encoding`,
 *   `cache-control`, `date`;
 * - the provider's request id (`x-request-id` OpenAI, `request-id` Anthropic, `apim-request-id`
 *   Azure), so a caller can quote it to support;
 * - retry guidance the official SDKs act on: `retry-after`, `retry-after-ms`, `x-should-retry`;
 * - `openai-processing-ms`, `openai-version`.
 *
 * Dropped, among everything else: the provider's `x-ratelimit-*` / `anthropic-ratelimit-*` (the
 * remaining quota of the key all tenants share would tell one tenant about the others' traffic;
 * the caller's own limits come from Gearbox's ticket instead), `openai-organization` and
 * `anthropic-organization-id` (the account), `set-cookie` (the provider's CDN cookies),
 * `server`, `via`, `alt-svc`.
 *
 * Hop-by-hop headers (`connection`, `keep-alive`, `transfer-encoding`, `te`, `trailer`,
 * `upgrade`, `proxy-*`) are never asked to be removed: Envoy's codec drops them itself (HTTP/1.1;
 * HTTP/2 forbids them) and the front door's `forwardable` skips them. Nor are Envoy's own
 * `x-envoy-*` headers or pseudo-headers: Envoy ignores mutations of those (mutation_rules.cc).
 */
import type { Headers } from "../processor/outcome.ts";
import { redactKey, type Provider } from "./provider.ts";

const FORWARDED = new Set([
  "content-type",
  "content-length",
  "content-encoding",
  "cache-control",
  "date",
  "x-request-id",
  "request-id",
  "apim-request-id",
  "retry-after",
  "retry-after-ms",
  "x-should-retry",
  "openai-processing-ms",
  "openai-version",
]);

/** Left to the transport: hop-by-hop headers (RFC 9110 §7.6.1) and Envoy's own. */
const TRANSPORT_OWNED = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "host",
]);

function transportOwned(name: string): boolean {
  return name.startsWith(":") || name.startsWith("x-envoy") || TRANSPORT_OWNED.has(name);
}

/**
 * Screens `upstream` (a provider's response headers): returns the names to remove, and puts the
 * redacted value of any forwarded header that held `provider`'s key into `set`. Names already in
 * `set` (Gearbox's own answer headers) are left to it.
 */
export function screenProviderHeaders(upstream: Headers, provider: Provider, set: Headers): string[] {
  const remove: string[] = [];
  for (const name in upstream) {
    if (transportOwned(name) || set[name] !== undefined) continue;
    const value = upstream[name] as string;
    if (!FORWARDED.has(name)) {
      remove.push(name);
      continue;
    }
    const redacted = redactKey(value, provider);
    if (redacted !== value) set[name] = redacted;
  }
  return remove;
}
