/**
 * `x-gearbox-route: auto|edge|cloud`, read in one place. A value outside the three is the
 * client's mistake (400 `invalid_route_hint`) whatever the policy; a valid one counts only when
 * the policy's `allow_client_route` lets clients pick the gear, else the call is `auto`. The 503
 * a client's forced edge gets when no edge agent can take it is written here once too.
 * The table of what the header does is `route-header.test.ts`.
 */
import { GatewayError, invalidRequest } from "../../common/errors.ts";
import { fail, ok, type Result } from "../../common/result.ts";
import type { ClientRoute } from "./policy/types.ts";

export type { ClientRoute, RouteTarget } from "./policy/types.ts";

export const ROUTE_HEADER = "x-gearbox-route";

/**
 * Headers that steer Envoy's routing: only Gearbox may set them, never the caller; and they are
 * Envoy's alone: its routes remove them before the upstream (`request_headers_to_remove` in
 * envoy/sidecar.yaml), as the front door does (`http/headers.ts`, `toUpstream`).
 */
export const ROUTING_HEADERS = ["x-gearbox-upstream", "x-gearbox-edge-endpoint"];

const CLIENT_ROUTES: readonly ClientRoute[] = ["auto", "edge", "cloud"];

/** The header as the client sent it: absent or empty is `auto`; case and surrounding spaces do not matter. */
export function parseRouteHeader(value: string | undefined): Result<ClientRoute, GatewayError> {
  if (value === undefined || value === "") return ok("auto");
  const hint = value.trim().toLowerCase();
  const known = CLIENT_ROUTES.find((r) => r === hint);
  if (known !== undefined) return ok(known);
  return fail(invalidRequest(`Header '${ROUTE_HEADER}' must be one of auto, edge, cloud; got '${value}'.`, ROUTE_HEADER, "invalid_route_hint"));
}

/** The route the client asked for, as the decision honours it: `auto` unless `allowClientRoute`. */
export function clientRoute(value: string | undefined, allowClientRoute: boolean): Result<ClientRoute, GatewayError> {
  const parsed = parseRouteHeader(value);
  if (!parsed.ok || allowClientRoute) return parsed;
  return ok("auto");
}

/** The client forced the edge and no edge agent can take the call: refused, never sent to a cloud. */
export function edgeUnavailable(): GatewayError {
  return new GatewayError(503, "server_error", "No edge agent is available for this request; it was not sent to a cloud provider.", {
    code: "edge_unavailable",
    headers: { "retry-after": "5" },
  });
}
