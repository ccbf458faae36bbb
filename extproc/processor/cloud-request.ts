/**
 * A call sent to its cloud provider: the provider and upstream model the route decision chose,
 * the translation plan, and the request mutation that makes Envoy send it there — the provider's
 * path, Gearbox's credentials in place of the caller's, the routing header, an uncompressed
 * answer Gearbox can read.
 */
import type { ParsedCall } from "../endpoints/spec.ts";
import { GatewayError } from "../../common/errors.ts";
import { authHeaders, CLIENT_CREDENTIAL_HEADERS } from "../providers/provider.ts";
import type { ProviderRoute } from "../routing/provider-route.ts";
import type { CallPlan } from "../translators/compose.ts";
import { foreignClientHeaders } from "../translators/client-headers.ts";
import { backendProtocol, type BackendProtocol } from "../translators/select.ts";
import type { Headers, Mutation } from "./outcome.ts";

/** The request a cloud call is made for, as the plan and the mutation need it. */
export interface CloudCallRequest {
  /** The client's query string: kept on the upstream path when the provider speaks the client's API. */
  query: string;
  requestId: string;
  /** Gearbox's control headers, never forwarded. */
  strip: readonly string[];
  /** The request's bytes as they stand (the client's, or Gearbox's rewrite of them): what the plan reads and may change. */
  body: Buffer | undefined;
  /** Whether `body` is Gearbox's rewrite (a kept conversation's history, masked values): then it is sent when the plan leaves the body as it is. */
  rewritten: boolean;
  /** The client's headers and API, whose own headers a provider of another API does not get. */
  client?: { headers: Headers; protocol: BackendProtocol };
}

export type CloudCall = { decision: ProviderRoute; plan: CallPlan; mutation: Mutation } | { decision: ProviderRoute; error: GatewayError };

/**
 * The plan and mutation that send `parsed` where `decision` says (a fallback member too).
 */
export function cloudCall(decision: ProviderRoute, parsed: ParsedCall, request: CloudCallRequest): CloudCall {
  const { query, requestId, strip, body: current, rewritten, client } = request;
  const { provider, upstreamModel } = decision;
  let plan: CallPlan;
  try {
    plan = parsed.plan(provider, current ? { upstreamModel, forceStreamUsage: true, clientBody: current } : { upstreamModel, forceStreamUsage: true });
  } catch (err) {
    if (err instanceof GatewayError) return { decision, error: err };
    throw err;
  }
  const upstream = plan.upstream;
  // The client's query string belongs to its API: kept for a provider of the same API only.
  const target = backendProtocol(provider.kind);
  const kept = !client || client.protocol === target ? query : "";
  // `Object.assign`, not a literal that starts with spreads: on Node 20 each key written after a
  // leading spread costs ~1 µs (a new hidden class per object), 5 µs per request here.
  const setHeaders: Headers = Object.assign({}, upstream.headers, authHeaders(provider), {
    ":path": provider.basePath + upstream.path + (upstream.path.includes("?") ? kept.replace(/^\?/, "&") : kept),
    "x-gearbox-upstream": provider.name,
    "x-gearbox-request-id": requestId,
    // Gearbox reads response bodies (usage, translation): ask for them uncompressed.
    "accept-encoding": "identity",
  });
  // The caller's key is Gearbox's call key: no client credential ever goes upstream.
  // Nor do headers of the client's API (and SDK telemetry) go to a provider that speaks another.
  const foreign = client && client.protocol !== target ? foreignClientHeaders(Object.keys(client.headers), client.protocol, target) : [];
  const removeHeaders = [...strip, ...[...CLIENT_CREDENTIAL_HEADERS, ...foreign].filter((h) => setHeaders[h] === undefined)];
  const mutation: Mutation = { setHeaders, removeHeaders, clearRouteCache: true };
  const body = upstream.body ?? (rewritten ? current : undefined);
  if (body) {
    mutation.body = body;
    setHeaders["content-length"] = String(body.length);
  }
  return { decision, plan, mutation };
}
