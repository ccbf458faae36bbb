/**
 * The route decision (`routing/route.ts`) applied to one request: an edge route becomes the
 * request's cascade and the mutation that sends it to the agent; a cloud route becomes its
 * translation plan, its failover (a primary whose breaker is open is skipped for a healthy
 * member) and the mutation that sends it to the provider; a refusal becomes the client's error.
 */
import { EdgeCascade } from "../cascade/cascade.ts";
import { CLIENT_CREDENTIAL_HEADERS } from "../providers/provider.ts";
import { RequestFailover } from "../resilience/request-failover.ts";
import type { CloudRoute, Route } from "../routing/route.ts";
import { ROUTE_HEADER } from "../routing/route-header.ts";
import type { JsonObject } from "../../common/schemas/fields.ts";
import { cloudCall, type CloudCall, type CloudCallRequest } from "./cloud-request.ts";
import type { RequestContext } from "./context.ts";
import type { Outcome } from "./outcome.ts";
import type { BackendProtocol } from "../translators/select.ts";

/** Headers that steer Gearbox; they are not forwarded to providers. */
export const CONTROL_HEADERS = [ROUTE_HEADER, "x-gearbox-cache", "x-gearbox-conversation-id", "x-gearbox-edge-endpoint", "x-gearbox-node", "x-gearbox-intent"];

/** Applies `route` (not a cache hit: that was answered already) to the request. */
export function applyRoute(ctx: RequestContext, route: Exclude<Route, { kind: "cache" }>, json: JsonObject): Outcome {
  if (route.policy) ctx.policy = route.policy;
  switch (route.kind) {
    case "reject":
      return ctx.reject(route.error);
    case "edge": {
      const parsed = ctx.parsed;
      if (parsed?.call.endpoint !== "chat") throw new Error("an edge route is only decided for chat calls");
      const cascade = new EdgeCascade({
        config: ctx.config,
        agent: route.agent,
        edgeModel: route.model,
        upgradeModel: route.upgradeTo,
        request: parsed.call.request,
        rawRequest: json,
        requestId: ctx.id,
        routeReason: route.reason,
        trace: ctx.trace,
        health: ctx.snapshot.providerHealth,
        calibration: route.calibration && { tag: route.calibration, online: ctx.state.calibration },
      });
      ctx.upstream = { kind: "edge", cascade };
      return { kind: "continue", mutation: cascade.requestMutation([...CONTROL_HEADERS, ...CLIENT_CREDENTIAL_HEADERS]) };
    }
    case "cloud": {
      const { call, failover } = steered(ctx, route);
      ctx.upstream = { kind: "cloud", decision: call.decision, plan: "plan" in call ? call.plan : undefined, failover };
      if ("error" in call) return ctx.reject(call.error);
      return { kind: "continue", mutation: call.mutation };
    }
    default:
      return route satisfies never;
  }
}

/** The cloud call for `route`, on the first healthy member of its chain when the primary's breaker is open. */
function steered(ctx: RequestContext, route: CloudRoute): { call: CloudCall; failover?: RequestFailover } {
  const parsed = ctx.parsed;
  if (!parsed) throw new Error("a route is only decided for a parsed call");
  const primary = { provider: route.provider, upstreamModel: route.upstreamModel, reason: route.reason };
  const request: CloudCallRequest = {
    query: ctx.query,
    requestId: ctx.id,
    strip: CONTROL_HEADERS,
    body: ctx.body,
    rewritten: ctx.rewrittenBody !== undefined,
    client: { headers: ctx.headers, protocol: clientProtocol(ctx.spec?.name) },
  };
  const call = cloudCall(primary, parsed, request);
  if ("error" in call) return { call };
  const failover = new RequestFailover({ config: ctx.config, health: ctx.snapshot.providerHealth, parsed, primary, chain: route.chain });
  const member = failover.steer();
  if (!member) return { call, failover };
  const steer = cloudCall({ provider: member.provider, upstreamModel: member.upstreamModel, reason: `fallback;${route.reason}` }, parsed, request);
  return { call: "error" in steer ? call : steer, failover };
}

/** The API the client spoke, as a backend protocol (whose own headers stay with it). */
function clientProtocol(endpoint: string | undefined): BackendProtocol {
  return endpoint === "messages" ? "anthropic" : endpoint === "gemini_generate_content" ? "gemini" : "openai";
}
