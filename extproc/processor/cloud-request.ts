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

export type CloudCall = { decision: ProviderRoute; plan: CallPlan; mutation: Mutation } | { decision: ProviderRoute; error: GatewayError };

/**
 * The plan and mutation that send `parsed` where `decision` says (a fallback member too).
 * `query`: the client's query string (kept on the upstream path when the provider speaks the
 * client's API); `strip`: Gearbox's control
 * headers, never forwarded; `rewritten`: the body Gearbox wrote in place of the client's (a kept
 * conversation's history), sent when the plan leaves the body as it is; `client`: the client's
 * headers and API, whose own headers a provider of another API does not get.
 */
export function cloudCall(
  decision: ProviderRoute,
  parsed: ParsedCall,
  query: string,
  requestId: string,
  strip: readonly string[],
  rewritten?: Buffer,
  client?: { headers: Headers; protocol: BackendProtocol },
): CloudCall {
  const { provider, upstreamModel } = decision;
  let plan: CallPlan;
  try {
    plan = parsed.plan(provider, { upstreamModel, forceStreamUsage: true });
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
  const body = upstream.body ?? rewritten;
  if (body) {
    mutation.body = body;
    setHeaders["content-length"] = String(body.length);
  }
  return { decision, plan, mutation };
}
