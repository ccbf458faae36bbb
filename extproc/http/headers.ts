/** Header plumbing for the front door: Node's header objects ⇄ the processor's plain maps. */
import type { IncomingHttpHeaders } from "node:http";
import type { Headers, Mutation } from "../processor/outcome.ts";

/** Hop-by-hop and length headers: never copied across a proxy hop (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
  "content-length",
  "expect",
]);

export function plainHeaders(incoming: IncomingHttpHeaders): Headers {
  const out: Headers = {};
  for (const [key, value] of Object.entries(incoming)) {
    if (value === undefined) continue;
    out[key] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/** Applies a processor mutation to a header map, in place (remove first, then set). */
export function applyHeaderMutation(headers: Headers, mutation: Mutation | undefined): void {
  if (!mutation) return;
  for (const key of mutation.removeHeaders ?? []) delete headers[key];
  for (const [key, value] of Object.entries(mutation.setHeaders ?? {})) headers[key] = value;
}

/** Headers fit to forward: no pseudo-headers, no hop-by-hop ones. */
export function forwardable(headers: Headers): Headers {
  const out: Headers = {};
  for (const [key, value] of Object.entries(headers)) {
    if (key.startsWith(":") || HOP_BY_HOP.has(key)) continue;
    out[key] = value;
  }
  return out;
}
