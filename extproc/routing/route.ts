/**
 * Where a call goes: the one decision. A pure function over the parsed call, the client's
 * headers, the runtime snapshot (policy, providers, edge agents) and the routing state; it
 * returns one tagged route with its reason, and the processor only applies it.
 *
 *   cache   the cache answered (looked up before: the lookup is I/O)
 *   reject  the call cannot go anywhere: the error the client gets
 *   edge    an edge agent answers; `upgradeTo` is the cloud model a weak answer is upgraded to
 *           (absent: the edge's answer is final)
 *   cloud   a provider answers, under `upstreamModel`; `chain` is the fallback chain
 *
 * The order, for a chat call (other endpoints only go to the cloud):
 *   1. `x-gearbox-route` is read once (`route-header.ts`): invalid → 400 whatever the policy; a
 *      valid hint counts only under `allow_client_route`, else the call is `auto`. A limit that
 *      degrades to the edge forces the edge whatever the header said.
 *   2. `cloud` → the cloud. `edge` (forced) → the edge agent serving the requested model, else
 *      `edge.default_model`'s; none, or tools in the call → refused (503 `edge_unavailable`,
 *      400 `tools_unsupported`), never sent to a cloud; the answer is final.
 *   3. `auto`: a model an edge agent serves goes to the edge (upgradable); a cloud model
 *      consults the policy when an agent serves `edge.default_model`; the policy's edge goes
 *      there (upgradable), its cloud to the provider with the policy's reason first. An edge
 *      that has no free agent when picked becomes the cloud, saying `edge_unavailable`.
 * The table of what the header does under each policy and agent state is `route-header.test.ts`.
 */
import { invalidRequest, type GatewayError } from "../../common/errors.ts";
import type { ChatRequest } from "../../common/canonical/types.ts";
import type { Result } from "../../common/result.ts";
import type { ParsedCall } from "../endpoints/spec.ts";
import type { EdgeAgentRef } from "../edge/agents.ts";
import type { Provider } from "../providers/provider.ts";
import { chainFor, type FallbackMember } from "../resilience/fallback-chains.ts";
import type { RoutingState } from "../runtime/routing-state.ts";
import type { RuntimeSnapshot } from "../runtime/snapshot.ts";
import { estimateComplexity } from "./complexity.ts";
import { classifyIntent } from "./intent/classify.ts";
import { decidePolicy, type ClientRoute, type PolicyDecision, type PolicyInput } from "./policy/index.ts";
import { resolveProvider } from "./provider-route.ts";
import { clientRoute, edgeUnavailable, ROUTE_HEADER } from "./route-header.ts";
import type { CalibrationTag } from "./calibration/online/online.ts";

/** Request headers, lower-cased names. */
type Headers = Readonly<Record<string, string>>;

export type Route = { kind: "cache"; reason: string } | { kind: "reject"; error: GatewayError; policy?: PolicyDecision } | EdgeRoute | CloudRoute;

export interface EdgeRoute {
  kind: "edge";
  agent: EdgeAgentRef;
  /** The model the agent runs. */
  model: string;
  /** The cloud model a weak answer is upgraded to; absent → the edge's answer is final. */
  upgradeTo?: string;
  /** `client_hint:edge`, `edge_model`, `degraded:<limit>` or the policy's reason. */
  reason: string;
  policy?: PolicyDecision;
  /** The online-calibrated threshold sent it here: the kept answer may be shadowed and judged. */
  calibration?: CalibrationTag;
}

export interface CloudRoute {
  kind: "cloud";
  provider: Provider;
  upstreamModel: string;
  /** Why this provider (`model_listed:openai`, `client_hint_cloud;…`); the policy's reason is `policy.reason`. */
  reason: string;
  /** Tried in order when the provider fails before any byte reached the client. */
  chain: readonly FallbackMember[];
  policy?: PolicyDecision;
}

/** What the decision reads of one request. */
export interface RouteRequest {
  /** The endpoint spec's name (`chat_completions`, `embeddings`, `messages`). */
  endpoint: string;
  parsed: ParsedCall;
  /** The client's request headers (route hint, node, conversation, intent hint). */
  headers: Headers;
  snapshot: RuntimeSnapshot;
  state: RoutingState;
  /** `x-gearbox-route` as read once for this request (`readClientRoute`). */
  client: Result<ClientRoute, GatewayError>;
  /** The conversation (`conversation_id` or `x-gearbox-conversation-id`), for stickiness. */
  conversationId?: string;
  /** The gear that answered the conversation's last exchange, as the conversation store says (every replica sees it). */
  stickyTarget?: "edge" | "cloud";
  /** The caller's tenant (online calibration holds a threshold per tenant); absent → `default`. */
  tenant?: string;
}

/** What is known by the time of the decision, beyond the request. */
export interface RouteFacts {
  /** The cache lookup found an answer. */
  cached?: "exact" | "semantic";
  /** The policy's decision, taken beforehand because it awaited (plugins, the edge intent layer). */
  consulted?: PolicyDecision;
  /** A limit refused the cloud and degrades to the edge: the edge is forced, with no upgrade; no edge → this error. */
  degraded?: GatewayError;
  /** The data boundary keeps the call on the edge (the category): forced edge, no upgrade, no cloud in any chain; no edge → this error. */
  edgeOnly?: GatewayError;
}

/** `x-gearbox-route` read once, as the snapshot's policy honours it. */
export function readClientRoute(headers: Headers, snapshot: RuntimeSnapshot): Result<ClientRoute, GatewayError> {
  return clientRoute(headers[ROUTE_HEADER], snapshot.policy.allowClientRoute);
}

/** The one decision (see the file's header for the order). */
export function decideRoute(req: RouteRequest, facts: RouteFacts = {}): Route {
  if (facts.cached) return { kind: "cache", reason: `cache:${facts.cached}` };
  if (!req.client.ok) return { kind: "reject", error: req.client.errors[0] ?? invalidRequest("Invalid route header.") };
  const degraded = facts.degraded ?? facts.edgeOnly;
  const hint: ClientRoute = degraded ? "edge" : req.client.value;
  const chat = chatOf(req);
  if (hint === "cloud" || !chat) return hint === "edge" ? refuse(edgeUnavailable(), degraded) : cloud(req, hint);
  const { config } = req.snapshot;
  const agents = req.snapshot.edgeAgents;
  const forced = hint === "edge";
  let model = agents.serves(chat.model) ? chat.model : forced ? config.edge.default_model : undefined;
  let reason = facts.edgeOnly ? "data_boundary:edge_only" : degraded ? `degraded:${degraded.code ?? "limit"}` : forced ? "client_hint:edge" : "edge_model";
  let policy: PolicyDecision | undefined;
  if (model === undefined && !forced && consultsPolicy(req)) {
    // A cloud model in auto mode: the routing brain may still pick the low gear.
    policy = facts.consulted ?? decidePolicy(policyInput(req, chat), req.snapshot.policy);
    if (policy.target === "edge") {
      model = config.edge.default_model;
      reason = policy.reason;
    }
  }
  const consulted = policy && { policy };
  if (model === undefined) return forced ? refuse(edgeUnavailable(), degraded) : cloud(req, hint, consulted);
  if (chat.tools && chat.tools.length > 0) {
    if (!forced) return cloud(req, hint, consulted);
    return refuse(invalidRequest("Tool calling is off on edge models; this request cannot stay on the edge.", "tools", "tools_unsupported"), degraded);
  }
  const agent = agents.pick(model, req.headers["x-gearbox-node"]);
  if (!agent) {
    // No agent takes the call after all (all busy, or the set changed since `serves`): a forced
    // edge is refused, a policy's edge becomes cloud and says so, as when no agent serves the model.
    if (forced) return refuse(edgeUnavailable(), degraded);
    const fellBack = policy?.target === "edge" ? { policy: { ...policy, target: "cloud" as const, reason: `edge_unavailable;${policy.reason}` } } : consulted;
    return cloud(req, hint, fellBack);
  }
  const upgradeTo = !forced && config.route.fallback.enable ? (config.edge.fallback_model ?? chat.model) : undefined;
  const calibration = policy?.layer === "heuristic" && upgradeTo !== undefined ? calibrationTags.get(req) : undefined;
  return { kind: "edge", agent, model, reason, ...(upgradeTo !== undefined && { upgradeTo }), ...consulted, ...(calibration && { calibration }) };
}

/**
 * The policy's input when the decision would consult it (auto mode, a chat call for a cloud
 * model, an edge agent for `edge.default_model`): the processor awaits plugins and the edge
 * intent layer on it first. Undefined → the policy is not consulted.
 */
export function policyConsultation(req: RouteRequest): PolicyInput | undefined {
  const chat = chatOf(req);
  if (!chat || !req.client.ok || req.client.value !== "auto") return undefined;
  if (req.snapshot.edgeAgents.serves(chat.model) || !consultsPolicy(req)) return undefined;
  return policyInput(req, chat);
}

/** The chat request when the call may go to an edge agent (OpenAI chat completions only). */
function chatOf(req: RouteRequest): ChatRequest | undefined {
  return req.endpoint === "chat_completions" && req.parsed.call.endpoint === "chat" ? req.parsed.call.request : undefined;
}

function consultsPolicy(req: RouteRequest): boolean {
  const edgeModel = req.snapshot.config.edge.default_model;
  return edgeModel !== undefined && req.snapshot.edgeAgents.serves(edgeModel);
}

/** A refusal; under a degrading limit, the limit's own error (the edge was the way around it). */
function refuse(error: GatewayError, degraded: GatewayError | undefined): Route {
  return { kind: "reject", error: degraded ?? error };
}

function cloud(req: RouteRequest, hint: ClientRoute, consulted?: { policy: PolicyDecision }): Route {
  const { config } = req.snapshot;
  const resolved = resolveProvider(req.parsed.model, config.providers);
  if (!resolved.ok) return { kind: "reject", error: resolved.errors[0] ?? invalidRequest("No route."), ...consulted };
  const { provider, upstreamModel } = resolved.value;
  const reason = hint === "cloud" ? `client_hint_cloud;${resolved.value.reason}` : resolved.value.reason;
  // The edge is a chain's last resort only for calls the edge could have taken and the client did not keep off it.
  const call = req.parsed.call;
  const edgeAllowed = call.endpoint === "chat" && (call.request.tools?.length ?? 0) === 0 && hint !== "cloud";
  const chain = chainFor(config, req.parsed.model, resolved.value).filter((m) => m.kind === "cloud" || edgeAllowed);
  return { kind: "cloud", provider, upstreamModel, reason, chain, ...consulted };
}

/** The calibration tag of a request's policy input, for its edge route (the input may be built before the decision). */
const calibrationTags = new WeakMap<RouteRequest, CalibrationTag>();

/**
 * Intent and complexity (pure, no I/O) and the live signals: the conversation's last target, the
 * cloud's latency, the budget spent; with `route.target_quality` and online calibration on, the
 * threshold it holds for the tenant and intent, the score observed for it.
 */
function policyInput(req: RouteRequest, chat: ChatRequest): PolicyInput {
  const { policy } = req.snapshot;
  const { headers, state } = req;
  const intent = classifyIntent(chat.messages, policy.allowClientIntent ? headers["x-gearbox-intent"] : undefined);
  const sticky = req.stickyTarget ?? state.sticky.get(req.conversationId ?? headers["x-gearbox-conversation-id"]);
  const latency = state.cloudLatency.p50();
  const budget = policy.dynamic.monthlyCloudBudgetUsd;
  const complexity = estimateComplexity(chat.messages);
  const calibrated = state.calibration.threshold(req.snapshot.config.route, req.tenant ?? "default", intent.intent, complexity.score);
  if (calibrated) calibrationTags.set(req, calibrated);
  return {
    intent: intent.intent,
    intentConfidence: intent.confidence,
    complexity,
    hasTools: (chat.tools?.length ?? 0) > 0,
    clientRoute: req.client.ok ? req.client.value : "auto",
    model: chat.model,
    edgeAvailable: true,
    ...(sticky && { stickyTarget: sticky }),
    ...(latency !== undefined && { cloudLatencyP50Ms: latency }),
    ...(budget !== undefined && { budget: { cloudSpentFraction: state.cloudSpend.fraction(budget) } }),
    ...(req.tenant !== undefined && { tenant: req.tenant }),
    ...(calibrated && { calibratedThreshold: { threshold: calibrated.threshold, source: calibrated.source } }),
  };
}
