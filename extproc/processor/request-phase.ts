/**
 * The request phases. Headers: which API this is, forged routing headers removed, the head
 * checked. Body, in order: who is calling (governance) → the body parsed and the model allowed
 * → the caches (a hit is the answer) → the policy consulted when it awaits (plugins, the edge
 * intent layer) → the route decided (`routing/route.ts`) and applied → admission against the
 * caller's limits (a refusal may degrade to the edge) → in shadow mode, recorded and let go.
 */
import { randomUUID } from "node:crypto";
import { GatewayError, invalidRequest } from "../../common/errors.ts";
import { isObject, type JsonObject } from "../../common/schemas/fields.ts";
import { CONVERSATION_FIELD, conversationIdOf, withoutConversationField } from "../conversation/conversations.ts";
import { conversationApi, conversationHeader } from "./conversation-stage.ts";
import { endpointFor } from "../endpoints/registry.ts";
import type { ParsedCall } from "../endpoints/spec.ts";
import { authenticate, checkModel, takeQueryKey } from "../governance/auth.ts";
import type { AdmitDecision, Governor } from "../governance/governor.ts";
import type { CallEstimate } from "../governance/limits.ts";
import type { Caller } from "../governance/model.ts";
import { decideRoute, policyConsultation, readClientRoute, type Route, type RouteFacts, type RouteRequest } from "../routing/route.ts";
import { ROUTING_HEADERS } from "../routing/route-header.ts";
import { operationOf, startRequestTrace, traceUpstream, type UpstreamCall } from "../telemetry/request-trace-spans.ts";
import { routedEstimate } from "./admission.ts";
import { applyRoute } from "./apply-route.ts";
import type { ClientIdentity, RequestContext } from "./context.ts";
import { decideConsulted } from "./edge-intent.ts";
import { CONTINUE, type Headers, type Outcome } from "./outcome.ts";
import { checkHead, parseBody } from "./request-checks.ts";
import { RunawayStage } from "./runaway-stage.ts";
import { isShadowed } from "./shadow.ts";
import { andThen, type Step } from "../../common/step.ts";
import { boundaryFacts, screenRequest } from "./boundary-stage.ts";

/**
 * `client`: who is calling, as the transport knows it — Envoy's `source.address` and
 * `connection.uri_san_peer_certificate` attributes (ext_proc), or the socket's address (front door).
 */
export function onRequestHeaders(ctx: RequestContext, headers: Headers, endOfStream: boolean, client: ClientIdentity): Outcome {
  ctx.client = client;
  const path = headers[":path"] ?? "/";
  ctx.spec = endpointFor(path);
  // A caller cannot pick Envoy's route: forged routing headers go already here, not only with the
  // body's answer, because Envoy routes on these headers if the body phase never answers
  // (`failure_mode_allow` after a timeout or a stream error, a body-less request).
  const forged = ROUTING_HEADERS.filter((h) => headers[h] !== undefined);
  const unforged: Outcome = forged.length === 0 ? CONTINUE : { kind: "continue", mutation: { removeHeaders: forged, clearRouteCache: true } };
  // Not an API Gearbox handles: untouched but for that.
  if (!ctx.spec) return unforged;
  const q = path.indexOf("?");
  ctx.query = q < 0 ? "" : takeQueryKey(path.slice(q), headers);
  ctx.headers = headers;
  ctx.id = headers["x-request-id"] || randomUUID();
  ctx.trace = startRequestTrace(ctx.deps.tracer, headers, ctx.spec, ctx.id);
  ctx.shadow = shadowFor(ctx, undefined);
  const refused = checkHead(ctx.spec, headers, endOfStream, ctx.config.limits.max_request_bytes);
  return refused ? ctx.reject(refused) : unforged;
}

export function onRequestBody(ctx: RequestContext, body: Buffer): Step<Outcome> {
  if (!ctx.spec || (ctx.shadow && ctx.logged)) return CONTINUE;
  if (!ctx.observing && !ctx.config.shadow.enable) return traced(ctx, authenticated(ctx, body));
  // Shadow mode may apply (known for sure once the caller is): decide, record, let it go on as sent.
  return andThen(authenticated(ctx, body), (o) => unlessShadowed(ctx, o));
}

function shadowFor(ctx: RequestContext, tenant: string | undefined): boolean {
  return ctx.observing || (ctx.transport === "ext_proc" && ctx.spec !== undefined && isShadowed(ctx.config, ctx.spec.name, tenant));
}

/** In shadow mode, the decision is recorded and the request goes on untouched. */
function unlessShadowed(ctx: RequestContext, outcome: Outcome): Outcome {
  if (!ctx.shadow) return outcome;
  if (!ctx.logged) ctx.finish();
  return CONTINUE;
}

function authenticated(ctx: RequestContext, body: Buffer): Step<Outcome> {
  const governance = ctx.deps.governance;
  if (!governance) return parseAndRoute(ctx, body);
  // Who is calling comes first: an unknown caller learns nothing about its request's validity.
  const request = {
    headers: ctx.headers,
    ...(ctx.client.address !== undefined && { sourceAddress: ctx.client.address }),
    ...(ctx.client.principal !== undefined && { sourcePrincipal: ctx.client.principal }),
  };
  ctx.trace?.step("gearbox.auth");
  return andThen(authenticate(request, governance.auth), (caller) => {
    if (!caller.ok) return ctx.reject(caller.errors[0] ?? new GatewayError(401, "authentication_error", "Authentication failed."));
    ctx.caller = caller.value;
    ctx.shadow = shadowFor(ctx, caller.value.tenant.id);
    return parseAndRoute(ctx, body);
  });
}

function parseAndRoute(ctx: RequestContext, body: Buffer): Step<Outcome> {
  const spec = ctx.spec;
  if (!spec) return CONTINUE;
  ctx.trace?.step("gearbox.parse");
  const read = parseBody(spec, body, ctx.config.limits.max_request_bytes);
  ctx.body = body;
  if (!read.ok) return ctx.reject(read.errors[0] ?? invalidRequest("Invalid request."));
  const { parsed, json } = read.value;
  ctx.parsed = parsed;
  if (ctx.caller) {
    const allowed = checkModel(ctx.caller, parsed.model);
    if (!allowed.ok) return ctx.reject(allowed.errors[0] ?? new GatewayError(403, "permission_error", "Model not allowed."));
  }
  if (parsed.prepare) {
    // The endpoint's own work once the caller is known (the Responses API's stored history).
    return parsed.prepare(ctx.caller?.tenant.id ?? "default").then((ready) => {
      if (ready instanceof GatewayError) return ctx.reject(ready);
      ctx.parsed = ready;
      return looked(ctx, ready, json as JsonObject);
    });
  }
  const id = conversationIdOf(json, ctx.headers);
  if (!id.ok) return ctx.reject(id.errors[0] ?? invalidRequest("Invalid conversation id."));
  ctx.conversationId = id.value;
  const conversations = ctx.deps.conversations;
  const api = conversationApi(spec.name);
  if (id.value === undefined || !conversations?.settings.enable || api === undefined || parsed.call.endpoint !== "chat") {
    // `conversation_id` is Gearbox's field: no provider gets it.
    const plain = isObject(json) && CONVERSATION_FIELD in json ? reparsed(ctx, withoutConversationField(json)) : { parsed, json: json as JsonObject };
    return looked(ctx, plain.parsed, plain.json);
  }
  ctx.trace?.step("gearbox.conversation");
  const messages = parsed.call.request.messages;
  return conversations.open(ctx.caller?.tenant.id ?? "default", id.value, api, json as JsonObject, messages, ctx.id).then((turn) => {
    if (turn instanceof GatewayError) return ctx.reject(turn);
    ctx.conversation = turn;
    // Routing, the caches and the limits see the whole history, as if the client had sent it.
    const full = reparsed(ctx, turn.full());
    return looked(ctx, full.parsed, full.json);
  });
}

/** The caches, then the route: a hit is answered here (no routing, no admission, nothing upstream). */
function looked(ctx: RequestContext, parsed: ParsedCall, json: JsonObject): Step<Outcome> {
  const spec = ctx.spec;
  if (!spec) return CONTINUE;
  // The data boundary, before anything reads the text: refused, kept on the edge, or masked (`boundary/`).
  const screened = screenRequest(ctx, spec.name, json);
  if (screened.kind === "refused") return ctx.reject(screened.error);
  if (screened.kind === "screened" && screened.body) ({ parsed, json } = reparsed(ctx, screened.body));
  const boundary = ctx.boundary;
  // Detected values are stored masked unless the tenant keeps originals (`conversations.keep_originals`).
  if (boundary && ctx.conversation && !ctx.deps.conversations?.keepsOriginals(ctx.caller?.tenant.id ?? "default"))
    ctx.conversation.protect((text) => boundary.forStore(text));
  const req = routeRequest(ctx, parsed);
  // Detected values go into no cache key or cached answer.
  const headers = ctx.boundary ? Object.assign({}, ctx.headers, { "x-gearbox-cache": "bypass" }) : ctx.headers;
  const lookup = ctx.cache.lookup(spec.name, parsed, ctx.caller?.tenant.id ?? "-", headers, ctx.id);
  if (!lookup) return consulted(ctx, req, json);
  ctx.trace?.step("gearbox.cache.lookup");
  return lookup.then((hit) => {
    if (!hit) return consulted(ctx, req, json);
    ctx.answer.status = 200;
    if (ctx.conversation) {
      ctx.conversation.answer.json(hit.body);
      Object.assign(hit.headers, conversationHeader(ctx.conversation.stats));
    }
    ctx.finish();
    if (ctx.trace) Object.assign(hit.headers, ctx.trace.responseHeaders());
    return { kind: "respond", response: hit };
  });
}

/** A rewritten body, parsed again as the client's API would: the request from here on. */
function reparsed(ctx: RequestContext, json: JsonObject): { parsed: ParsedCall; json: JsonObject } {
  const spec = ctx.spec;
  const again = spec?.parse(json);
  if (!again?.ok) throw new Error(`a rewritten ${spec?.name ?? "request"} body did not parse: ${again?.errors.map((e) => e.message).join("; ") ?? "no spec"}`);
  ctx.parsed = again.value;
  ctx.body = Buffer.from(JSON.stringify(json));
  ctx.rewrittenBody = ctx.body;
  return { parsed: again.value, json };
}

function routeRequest(ctx: RequestContext, parsed: ParsedCall): RouteRequest {
  const { snapshot, state, headers } = ctx;
  const sticky = ctx.conversation?.lastTarget;
  return {
    endpoint: ctx.spec?.name ?? "",
    parsed,
    headers,
    snapshot,
    state,
    client: readClientRoute(headers, snapshot),
    ...(ctx.conversationId !== undefined && { conversationId: ctx.conversationId }),
    ...(sticky && { stickyTarget: sticky }),
    ...(ctx.caller && { tenant: ctx.caller.tenant.id }),
  };
}

/** The policy, consulted first when it may await (the edge intent layer, plugins); then the route. */
function consulted(ctx: RequestContext, req: RouteRequest, json: JsonObject): Step<Outcome> {
  ctx.trace?.step("gearbox.decision");
  const { plugins, policy, edgeAgents } = ctx.snapshot;
  const awaits = plugins.length > 0 || ctx.config.route.edge_intent.enable;
  const input = awaits && !ctx.boundary?.edgeOnly ? policyConsultation(req) : undefined;
  if (!input) return routed(ctx, req, json, {});
  const consult = { config: ctx.config, policy, plugins, agents: edgeAgents, callerNode: ctx.headers["x-gearbox-node"], requestId: ctx.id, trace: ctx.trace };
  return decideConsulted(input, req.parsed, consult).then(({ decided, edgeIntent }) => {
    ctx.edgeIntent = edgeIntent;
    return routed(ctx, req, json, { consulted: decided });
  });
}

/** Decides and applies the route, then — with governance — admits the call against the caller's limits. */
function routed(ctx: RequestContext, req: RouteRequest, json: JsonObject, facts: RouteFacts): Step<Outcome> {
  const route = decideRoute(req, boundaryFacts(ctx, facts));
  if (route.kind === "cache") throw new Error("a cache route is answered at the lookup");
  const outcome = applyRoute(ctx, route, fitted(ctx, route, json));
  const caller = ctx.caller;
  const governor = ctx.deps.governance?.governor;
  if (!caller || !governor || outcome.kind !== "continue") return outcome;
  return admit(ctx, governor, caller, req, json, outcome);
}

/**
 * Admission before anything goes upstream. Refused → the routed call is dropped and the client
 * gets the 429 naming the limit; a token or cost cap with `degrade_to_edge` → the route is
 * decided again with the edge forced (no upgrade: the cloud is what the cap forbids), admitted
 * as an edge call; no edge for it → the limit's refusal.
 */
function admit(ctx: RequestContext, governor: Governor, caller: Caller, req: RouteRequest, json: JsonObject, routedOutcome: Outcome): Step<Outcome> {
  ctx.trace?.step("gearbox.admission");
  // The body as it goes upstream: the client's bytes, or the rewrite `json` was serialized into (`reparsed`).
  const runaway = new RunawayStage(governor, caller, ctx.client, ctx.spec?.name ?? "", req.parsed, ctx.body ?? Buffer.from(JSON.stringify(json)));
  ctx.runaway = runaway;
  const { fingerprint, who: repeater } = runaway;
  // An edge answer that may be upgraded is admitted as a cloud call: the upgrade would cost it.
  const target = ctx.cascade && ctx.cascade.upgradeModel === undefined ? "edge" : "cloud";
  const estimate = () => routedEstimate(ctx.parsed ?? req.parsed, ctx.config.providers, ctx.cloud?.decision, ctx.cascade);
  // The in-memory limiter (embedded defaults) answers at once: no turn of the event loop.
  return andThen(governor.admit({ caller, model: req.parsed.model, estimate: estimate(), fingerprint, repeater, target }), (decision) => {
    if (!decision.ok) return refused(ctx, governor, caller, req, json, runaway, decision, estimate);
    ctx.ticket = decision.ticket;
    runaway.admitted(decision.ticket);
    return routedOutcome;
  });
}

/** Refused admission: a replay of a repeat, the call degraded to the edge and admitted again, or the limit's 429. */
async function refused(
  ctx: RequestContext,
  governor: Governor,
  caller: Caller,
  req: RouteRequest,
  json: JsonObject,
  runaway: RunawayStage,
  decision: Exclude<AdmitDecision, { ok: true }>,
  estimate: () => CallEstimate,
): Promise<Outcome> {
  ctx.upstream = undefined;
  // A repeat past the limit: the answer just given to this caller, when there is one, rather than a refusal.
  const replay = decision.runaway ? await runaway.replay(ctx.id) : undefined;
  if (replay) {
    ctx.answer.status = 200;
    ctx.finish();
    if (ctx.trace) Object.assign(replay.headers, ctx.trace.responseHeaders());
    return { kind: "respond", response: replay };
  }
  const degraded = decision.degradeToEdge ? decideRoute(req, { degraded: decision.error }) : undefined;
  if (degraded?.kind !== "edge") return ctx.reject(decision.error);
  const edge = applyRoute(ctx, degraded, fitted(ctx, degraded, json));
  const again = await governor.admit({
    caller,
    model: req.parsed.model,
    estimate: estimate(),
    fingerprint: runaway.fingerprint,
    repeater: runaway.who,
    target: "edge",
  });
  if (!again.ok) return ctx.reject(again.error);
  ctx.ticket = again.ticket;
  runaway.admitted(again.ticket);
  return edge;
}

/** The body with the conversation's history fitted to the route's target (summarized when it switched gear or is over budget). */
function fitted(ctx: RequestContext, route: Exclude<Route, { kind: "cache" }>, json: JsonObject): JsonObject {
  const turn = ctx.conversation;
  if (!turn || route.kind === "reject") return json;
  const body = route.kind === "edge" ? turn.forTarget("edge", route.model) : turn.forTarget("cloud", route.upstreamModel);
  return reparsed(ctx, ctx.boundary?.remask(body) ?? body).json;
}

/** Tracing: the span of the call `outcome` sends upstream (edge or cloud), its `traceparent` on the request. */
function traced(ctx: RequestContext, outcome: Step<Outcome>): Step<Outcome> {
  const trace = ctx.trace;
  if (!trace) return outcome;
  const operation = operationOf(ctx.spec?.name);
  const describe = (): UpstreamCall | undefined => {
    const up = ctx.upstream;
    if (up?.kind === "edge") return { target: "edge", model: up.cascade.edgeModel };
    return up ? { target: "cloud", model: up.decision.upstreamModel, provider: up.decision.provider } : undefined;
  };
  return andThen(outcome, (o) => traceUpstream(trace, o, operation, describe));
}
