/** Header plumbing for the front door: Node's header objects ⇄ the processor's plain maps. */
import type { IncomingHttpHeaders } from "node:http";
import type { Headers, Mutation } from "../processor/outcome.ts";
import { ROUTING_HEADERS } from "../routing/route-header.ts";

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

// `for…in` over these plain maps rather than `Object.entries`: no array per header (bench/RESULTS.md, issue 25).

export function plainHeaders(incoming: IncomingHttpHeaders): Headers {
  const out: Headers = {};
  for (const key in incoming) {
    const value = incoming[key];
    if (value === undefined) continue;
    out[key] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/** Applies a processor mutation to a header map, in place (remove first, then set). */
export function applyHeaderMutation(headers: Headers, mutation: Mutation | undefined): void {
  if (!mutation) return;
  const { removeHeaders, setHeaders } = mutation;
  if (removeHeaders) for (const key of removeHeaders) delete headers[key];
  if (setHeaders) for (const key in setHeaders) headers[key] = setHeaders[key] as string;
}

/** Headers fit to forward: no pseudo-headers, no hop-by-hop ones. */
export function forwardable(headers: Headers): Headers {
  return copiedWithout(headers, HOP_BY_HOP);
}

/** What Envoy's routes leave out of a request to the upstream: hop-by-hop, and Gearbox's routing headers. */
const NOT_UPSTREAM = new Set([...HOP_BY_HOP, ...ROUTING_HEADERS]);

/**
 * A request's headers as the upstream (a provider, an edge agent) gets them: `forwardable`, and
 * without the routing headers the processor set for Envoy, which Envoy's routes remove
 * (`request_headers_to_remove`): a provider never learns Gearbox's internal routing.
 */
export function toUpstream(headers: Headers): Headers {
  return copiedWithout(headers, NOT_UPSTREAM);
}

function copiedWithout(headers: Headers, left: ReadonlySet<string>): Headers {
  const out: Headers = {};
  for (const key in headers) {
    if (key.charCodeAt(0) === 0x3a /* : */ || left.has(key)) continue;
    out[key] = headers[key] as string;
  }
  return out;
}
