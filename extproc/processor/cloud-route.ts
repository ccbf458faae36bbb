/**
 * A call sent to its cloud provider: the route decision (which provider, which upstream model),
 * the translation plan, and the request mutation that makes Envoy send it there — the provider's
 * path, Gearbox's credentials in place of the caller's, the routing header, an uncompressed
 * answer Gearbox can read.
 */
import type { ParsedCall } from "../endpoints/spec.ts";
import { GatewayError } from "../../common/errors.ts";
import { authHeaders, CLIENT_CREDENTIAL_HEADERS, type Provider } from "../providers/provider.ts";
import { decideRoute, type RouteDecision } from "../routing/decide.ts";
import type { ClientRoute } from "../routing/route-header.ts";
import type { CallPlan } from "../translators/compose.ts";
import type { Headers, Mutation } from "./outcome.ts";

export type CloudRoute = { decision: RouteDecision; plan: CallPlan; mutation: Mutation } | { decision?: RouteDecision; error: GatewayError };

/**
 * `route`: the client's route as the policy honours it (`clientRoute` in `routing/route-header.ts`);
 * `query`: the client's query string (kept on the upstream path); `strip`: Gearbox's control
 * headers, never forwarded.
 */
export function cloudRoute(
  parsed: ParsedCall,
  route: ClientRoute,
  providers: readonly Provider[],
  query: string,
  requestId: string,
  strip: readonly string[],
): CloudRoute {
  const routed = decideRoute(parsed.model, route, providers);
  if (!routed.ok) return { error: routed.errors[0] ?? new GatewayError(500, "server_error", "No route.") };
  return cloudRouteTo(routed.value, parsed, query, requestId, strip);
}

/** The plan and mutation that send `parsed` where `decision` says (a fallback member too). */
export function cloudRouteTo(decision: RouteDecision, parsed: ParsedCall, query: string, requestId: string, strip: readonly string[]): CloudRoute {
  const { provider, upstreamModel } = decision;
  let plan: CallPlan;
  try {
    plan = parsed.plan(provider, { upstreamModel, forceStreamUsage: true });
  } catch (err) {
    if (err instanceof GatewayError) return { decision, error: err };
    throw err;
  }
  const upstream = plan.upstream;
  const setHeaders: Headers = {
    ...upstream.headers,
    ...authHeaders(provider),
    ":path": provider.basePath + upstream.path + (upstream.path.includes("?") ? query.replace(/^\?/, "&") : query),
    "x-gearbox-upstream": provider.name,
    "x-gearbox-request-id": requestId,
    // Gearbox reads response bodies (usage, translation): ask for them uncompressed.
    "accept-encoding": "identity",
  };
  // The caller's key is Gearbox's call key: no client credential ever goes upstream.
  const removeHeaders = [...strip, ...CLIENT_CREDENTIAL_HEADERS.filter((h) => setHeaders[h] === undefined)];
  const mutation: Mutation = { setHeaders, removeHeaders, clearRouteCache: true };
  if (upstream.body) {
    mutation.body = upstream.body;
    setHeaders["content-length"] = String(upstream.body.length);
  }
  return { decision, plan, mutation };
}
