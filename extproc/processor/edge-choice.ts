/**
 * Whether a call goes to an edge agent (an `EdgeCascade`), and the routing policy's part in it.
 * The client forced the edge (`x-gearbox-route: edge`: no cloud upgrade), or asked in auto mode
 * for a model an edge agent serves (upgrade when the answer is weak), or the policy picked the
 * low gear for a cloud model; a limit that degrades to the edge forces it. Only OpenAI chat
 * calls without tools go to the edge.
 */
import { EdgeCascade } from "../cascade/cascade.ts";
import type { EdgeDirectory } from "../edge/agents.ts";
import type { GatewayConfig } from "../config/load.ts";
import type { ParsedCall } from "../endpoints/spec.ts";
import { invalidRequest, type GatewayError } from "../../common/errors.ts";
import { clientRoute, edgeUnavailable, ROUTE_HEADER } from "../routing/route-header.ts";
import { decidePolicy, type PolicyDecision, type PolicyInput } from "../routing/policy/index.ts";
import type { JsonObject } from "../../common/schemas/fields.ts";
import type { RequestTrace } from "../telemetry/request-trace.ts";
import { policyFor } from "./config-state.ts";
import type { Headers } from "./outcome.ts";
import { policyInputFor } from "./policy-input.ts";
import type { RuntimeState } from "./runtime-state.ts";
import type { ProviderHealth } from "../resilience/provider-health.ts";

/** What the choice reads of the request and the process. */
export interface EdgeChoiceContext {
  config: GatewayConfig;
  agents: EdgeDirectory;
  headers: Headers;
  endpoint: string | undefined;
  /** The gateway's routing state (stickiness, cloud latency, spend). */
  runtime: RuntimeState;
  requestId: string;
  trace: RequestTrace | undefined;
  /** Providers' health, for the cascade's upgrade call. */
  health?: ProviderHealth;
}

export interface EdgeChoice {
  /** The call goes to this edge agent. */
  cascade?: EdgeCascade;
  /** The call cannot go where the client forced it. */
  error?: GatewayError;
  /** The routing policy's decision, when it was consulted. */
  policy?: PolicyDecision;
}

export function chooseEdge(ctx: EdgeChoiceContext, parsed: ParsedCall, raw: JsonObject, decided?: PolicyDecision, degraded?: string): EdgeChoice {
  const { config, agents } = ctx;
  // A client may force a gear only where the policy allows it; a limit that degrades to the edge forces it.
  const client = clientRoute(ctx.headers[ROUTE_HEADER], policyFor(config).allowClientRoute);
  if (!client.ok) return { ...(client.errors[0] && { error: client.errors[0] }) };
  const hint = degraded !== undefined ? ("edge" as const) : client.value;
  if (hint === "cloud" || ctx.endpoint !== "chat_completions" || parsed.call.endpoint !== "chat") return {};
  const req = parsed.call.request;
  const forced = hint === "edge";
  let model = agents.serves(req.model) ? req.model : forced ? config.edge.default_model : undefined;
  let reason = degraded ?? (forced ? "client_hint:edge" : "edge_model");
  let policy: PolicyDecision | undefined;
  if (model === undefined && !forced && config.edge.default_model !== undefined && agents.serves(config.edge.default_model)) {
    // A cloud model in auto mode: the routing brain may still pick the low gear.
    policy = decided ?? decidePolicy(policyInputFor(req, hint, config, ctx.headers, ctx.runtime), policyFor(config));
    if (policy.target === "edge") {
      model = config.edge.default_model;
      reason = policy.reason;
    }
  }
  const consulted = policy ? { policy } : {};
  if (model === undefined) {
    return forced ? { error: edgeUnavailable() } : consulted;
  }
  if (req.tools && req.tools.length > 0) {
    return forced
      ? { error: invalidRequest("Tool calling is off on edge models; this request cannot stay on the edge.", "tools", "tools_unsupported") }
      : consulted;
  }
  const agent = agents.pick(model, ctx.headers["x-gearbox-node"]);
  if (!agent) {
    // No agent takes the call after all (all busy, or the set changed since `serves`): a forced
    // edge is refused, a policy's edge becomes cloud and says so, as when no agent serves the model.
    if (forced) return { error: edgeUnavailable() };
    return policy?.target === "edge" ? { policy: { ...policy, target: "cloud", reason: `edge_unavailable;${policy.reason}` } } : consulted;
  }
  return {
    ...consulted,
    cascade: new EdgeCascade({
      config,
      agent,
      edgeModel: model,
      upgrade: !forced,
      request: req,
      rawRequest: raw,
      requestId: ctx.requestId,
      routeReason: reason,
      trace: ctx.trace,
      health: ctx.health,
    }),
  };
}

/** The policy's input when this call would consult it (auto mode, a cloud model, an edge to go to). */
export function policyInputIfConsulted(ctx: EdgeChoiceContext, parsed: ParsedCall): PolicyInput | undefined {
  const { config, agents } = ctx;
  const client = clientRoute(ctx.headers[ROUTE_HEADER], policyFor(config).allowClientRoute);
  if (!client.ok || client.value !== "auto" || ctx.endpoint !== "chat_completions" || parsed.call.endpoint !== "chat") return undefined;
  const edgeModel = config.edge.default_model;
  if (agents.serves(parsed.call.request.model) || edgeModel === undefined || !agents.serves(edgeModel)) return undefined;
  return policyInputFor(parsed.call.request, client.value, config, ctx.headers, ctx.runtime);
}
