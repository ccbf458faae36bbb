/**
 * The one generic processor: a per-request state machine over the phases Envoy's ext_proc filter
 * (or the front door) walks through. Endpoint specs supply parsing and translation; routing
 * supplies the decision; this file only sequences them and says what to mutate.
 */
import { randomUUID } from "node:crypto";
import type { Usage } from "../../common/canonical/types.ts";
import type { GatewayConfig } from "../config/load.ts";
import { endpointFor } from "../endpoints/registry.ts";
import type { EndpointSpec, ParsedCall } from "../endpoints/spec.ts";
import type { CallPlan } from "../translators/compose.ts";
import { GatewayError, invalidRequest, toErrorResponse } from "../../common/errors.ts";
import { CLIENT_CREDENTIAL_HEADERS } from "../providers/provider.ts";
import { EdgeCascade } from "../cascade/cascade.ts";
import type { EdgeDirectory } from "../edge/agents.ts";
import type { RouteDecision } from "../routing/decide.ts";
import { clientRoute, ROUTE_HEADER } from "../routing/route-header.ts";
import type { JsonObject } from "../../common/schemas/fields.ts";
import { edgeAgentsFor, policyFor } from "./config-state.ts";
import { runtimeStateOf, type RuntimeState } from "./runtime-state.ts";
import { routedEstimate, settlementUsage } from "./admission.ts";
import { decideConsulted } from "./edge-intent.ts";
import { authenticate, checkModel, type AuthDeps } from "../governance/auth.ts";
import type { Governor, Ticket } from "../governance/governor.ts";
import type { CallEstimate } from "../governance/limits.ts";
import type { Caller } from "../governance/model.ts";
import type { PolicyDecision, PolicyPlugin } from "../routing/policy/index.ts";
import type { Logger } from "../../common/telemetry/logger.ts";
import type { Tracer } from "@opentelemetry/api";
import type { RequestTrace } from "../telemetry/request-trace.ts";
import { endRequestTrace, operationOf, startRequestTrace, traceUpstream, type UpstreamCall } from "../telemetry/request-trace-spans.ts";
import { logOnly, type Telemetry } from "../telemetry/telemetry.ts";
import { requestRecord, type Transport } from "./request-record.ts";
import { isShadowed } from "./shadow.ts";
import type { StreamTranslator } from "../translators/translator.ts";
import type { ResponseCache } from "../cache/response-cache.ts";
import { RequestCache } from "./cache-stage.ts";
import type { SemanticCache } from "../cache/semantic/semantic-cache.ts";
import { CONTINUE, type Headers, type Outcome } from "./outcome.ts";
import { checkHead, parseBody } from "./request-checks.ts";
import { chooseEdge, policyInputIfConsulted, type EdgeChoiceContext } from "./edge-choice.ts";
import { cloudRoute, cloudRouteTo, type CloudRoute } from "./cloud-route.ts";
import { RequestFailover } from "../resilience/request-failover.ts";
import { healthFor, type ProviderHealth } from "../resilience/provider-health.ts";
import { asLocalReply, fallbackMutation } from "../resilience/fallback-response.ts";
import { traceRetry } from "../resilience/attempt-spans.ts";
import { finalAnswer } from "./final-answer.ts";
import { screenProviderHeaders } from "../providers/response-headers.ts";
import { RunawayStage } from "./runaway-stage.ts";

/** Headers that steer Gearbox; they are not forwarded to providers. */
const CONTROL_HEADERS = [ROUTE_HEADER, "x-gearbox-cache", "x-gearbox-conversation-id", "x-gearbox-edge-endpoint", "x-gearbox-node", "x-gearbox-intent"];
/** Headers that steer Envoy's routing: only Gearbox may set them, never the caller. */
const ROUTING_HEADERS = ["x-gearbox-upstream", "x-gearbox-edge-endpoint"];

/** The caller as the transport identifies it. */
export interface ClientIdentity {
  /** Source IP (no port). */
  address?: string;
  /** Workload identity (SPIFFE URI) from mTLS. */
  principal?: string;
}

export interface ProcessorDeps {
  config: GatewayConfig;
  logger: Logger;
  /** Routing policy plugins, loaded at start from `route.plugins`. */
  plugins?: readonly PolicyPlugin[];
  /** Routing state that outlives a config (stickiness, cloud latency, the month's spend): one per gateway; absent → one for this deps object. */
  runtime?: RuntimeState;
  /** Live edge agents (the control plane's); absent → the static `edge.agents` of the config. */
  edgeAgents?: EdgeDirectory;
  /** Who may call and how much: authentication and limits. Absent → neither (embedded tests). */
  governance?: Governance;
  /** The exact response cache (`cache.exact`); absent → no exact caching. */
  cache?: ResponseCache;
  /** The semantic cache (`cache.semantic`); absent → no semantic caching. */
  semanticCache?: SemanticCache;
  /** OpenTelemetry tracer (`telemetry.tracing`); absent → no tracing. */
  tracer?: Tracer;
  /** Where finished requests go (log line, metrics); absent → the log line alone. */
  telemetry?: Telemetry;
  /** Providers' breakers and retry budgets, one per process; absent → one per config. */
  providerHealth?: ProviderHealth;
}

/** Authentication (tenants, keys, workload identities) and the limits governor. */
export interface Governance {
  auth: AuthDeps;
  governor: Governor;
}

type Phase = "request_headers" | "request_body" | "response_headers" | "response_body" | "done";

export class RequestProcessor {
  private phase: Phase = "request_headers";
  private spec: EndpointSpec | undefined;
  private requestId = "";
  private query = "";
  private requestHeadersSeen: Headers = {};
  private client: ClientIdentity = {};
  /** The authenticated caller and its admission, when governance is on. */
  private caller: Caller | undefined;
  private ticket: Ticket | undefined;
  /** Runaway protection's part (fingerprint, answer recorded for repeats, replay), once admitted. */
  private runaway: RunawayStage | undefined;
  private parsed: ParsedCall | undefined;
  private decision: RouteDecision | undefined;
  private plan: CallPlan | undefined;
  private status = 0;
  private responseHeadersSeen: Headers = {};
  private stream: StreamTranslator | undefined;
  private cascade: EdgeCascade | undefined;
  private policy: PolicyDecision | undefined;
  private usage: Usage | undefined;
  private readonly startedAt = performance.now();
  private logged = false;
  /** What the edge intent layer said, for the request log (`code_gen@0.812`, `timeout`, …). */
  private edgeIntent: string | undefined;
  /** This request's trace (tracing on). */
  private trace: RequestTrace | undefined;
  /** The caches' part: lookup, and the answer stored after a miss. */
  private readonly cache: RequestCache;
  /** When the first answer bytes of a stream went towards the client (TTFT). */
  private firstByteAt: number | undefined;
  /** Shadow mode: decide and record, change nothing (`shadow:` config, or Envoy's observability mode). */
  private shadow = false;
  private observing = false;
  private readonly transport: Transport;
  /** The call's fallback chain and upstream attempts (cloud calls). */
  private failover: RequestFailover | undefined;
  /** The client's request bytes, for a fallback that sends them as they are. */
  private body: Buffer | undefined;
  /** Aborted when the transport gives up on the request: fallback calls stop. */
  private readonly gone = new AbortController();

  /** The gateway's routing state: a pushed policy does not reset it. */
  private readonly runtime: RuntimeState;

  /** The config this request runs under: a policy pushed mid-request applies from the next one. */
  private readonly config: GatewayConfig;
  private readonly plugins: readonly PolicyPlugin[];

  constructor(
    private readonly deps: ProcessorDeps,
    options: { transport?: Transport } = {},
  ) {
    this.transport = options.transport ?? "ext_proc";
    this.config = deps.config;
    this.plugins = deps.plugins ?? [];
    this.runtime = runtimeStateOf(deps);
    this.cache = new RequestCache(deps, deps.config);
  }

  /** Live agents from the control plane when connected to one, else `edge.agents` from the config. */
  private edgeAgents(): EdgeDirectory {
    return this.deps.edgeAgents ?? edgeAgentsFor(this.config);
  }

  /** True when the request's path is not an API Gearbox handles (it passes through untouched). */
  get passthrough(): boolean {
    return this.spec === undefined;
  }

  get id(): string {
    return this.requestId;
  }

  /** The request's W3C trace id, when tracing is on. */
  get traceId(): string | undefined {
    return this.trace?.traceId;
  }

  /** Envoy's observability mode: answers are ignored, so the request is only observed (shadowed). */
  observeOnly(): void {
    this.observing = true;
  }

  private shadowFor(tenant: string | undefined): boolean {
    return this.observing || (this.transport === "ext_proc" && this.spec !== undefined && isShadowed(this.config, this.spec.name, tenant));
  }

  /**
   * `client`: who is calling, as the transport knows it — Envoy's `source.address` and
   * `connection.uri_san_peer_certificate` attributes (ext_proc), or the socket's address (front door).
   */
  requestHeaders(headers: Headers, endOfStream: boolean, client: ClientIdentity = {}): Outcome {
    this.phase = "request_body";
    this.client = client;
    const path = headers[":path"] ?? "/";
    this.spec = endpointFor(path);
    // A caller cannot pick Envoy's route: forged routing headers go already here, not only with the
    // body's answer, because Envoy routes on these headers if the body phase never answers
    // (`failure_mode_allow` after a timeout or a stream error, a body-less request).
    const forged = ROUTING_HEADERS.filter((h) => headers[h] !== undefined);
    const unforged: Outcome = forged.length === 0 ? CONTINUE : { kind: "continue", mutation: { removeHeaders: forged, clearRouteCache: true } };
    // Not an API Gearbox handles: untouched but for that.
    if (!this.spec) return unforged;
    const q = path.indexOf("?");
    this.query = q < 0 ? "" : path.slice(q);
    this.requestHeadersSeen = headers;
    this.requestId = headers["x-request-id"] || randomUUID();
    this.trace = startRequestTrace(this.deps.tracer, headers, this.spec, this.requestId);
    this.shadow = this.shadowFor(undefined);
    const refused = checkHead(this.spec, headers, endOfStream, this.config.limits.max_request_bytes);
    return refused ? this.reject(refused) : unforged;
  }

  requestBody(body: Buffer): Outcome | Promise<Outcome> {
    this.phase = "response_headers";
    if (!this.spec || (this.shadow && this.logged)) return CONTINUE;
    if (!this.observing && !this.config.shadow.enable) return this.traced(this.authenticated(body));
    // Shadow mode may apply (known for sure once the caller is): decide, record, let it go on as sent.
    const outcome = this.authenticated(body);
    return outcome instanceof Promise ? outcome.then((o) => this.unlessShadowed(o)) : this.unlessShadowed(outcome);
  }

  /** In shadow mode, the decision is recorded and the request goes on untouched. */
  private unlessShadowed(outcome: Outcome): Outcome {
    if (!this.shadow) return outcome;
    if (!this.logged) this.finish();
    return CONTINUE;
  }

  private authenticated(body: Buffer): Outcome | Promise<Outcome> {
    const governance = this.deps.governance;
    if (!governance) return this.parseAndRoute(body);
    // Who is calling comes first: an unknown caller learns nothing about its request's validity.
    const request = {
      headers: this.requestHeadersSeen,
      ...(this.client.address !== undefined && { sourceAddress: this.client.address }),
      ...(this.client.principal !== undefined && { sourcePrincipal: this.client.principal }),
    };
    this.trace?.step("gearbox.auth");
    return authenticate(request, governance.auth).then((caller) => {
      if (!caller.ok) return this.reject(caller.errors[0] ?? new GatewayError(401, "authentication_error", "Authentication failed."));
      this.caller = caller.value;
      this.shadow = this.shadowFor(caller.value.tenant.id);
      return this.parseAndRoute(body);
    });
  }

  private parseAndRoute(body: Buffer): Outcome | Promise<Outcome> {
    const spec = this.spec;
    if (!spec) return CONTINUE;
    this.trace?.step("gearbox.parse");
    const read = parseBody(spec, body, this.config.limits.max_request_bytes);
    this.body = body;
    if (!read.ok) return this.reject(read.errors[0] ?? invalidRequest("Invalid request."));
    const { parsed: call, json } = read.value;
    this.parsed = call;
    if (this.caller) {
      const allowed = checkModel(this.caller, call.model);
      if (!allowed.ok) return this.reject(allowed.errors[0] ?? new GatewayError(403, "permission_error", "Model not allowed."));
    }
    const lookup = this.cache.lookup(spec.name, call, this.caller?.tenant.id ?? "-", this.requestHeadersSeen, this.requestId);
    if (!lookup) return this.decide(call, json);
    // A hit is answered here: no routing, no admission, nothing upstream.
    this.trace?.step("gearbox.cache.lookup");
    return lookup.then((hit) => {
      if (!hit) return this.decide(call, json);
      this.status = 200;
      this.finish();
      if (this.trace) Object.assign(hit.headers, this.trace.responseHeaders());
      return { kind: "respond", response: hit };
    });
  }

  /** The routing decision (policy, edge intent, plugins) for a parsed call, then the route. */
  private decide(parsed: ParsedCall, json: unknown): Outcome | Promise<Outcome> {
    this.trace?.step("gearbox.decision");
    const consults = this.plugins.length > 0 || this.config.route.edge_intent.enable;
    const input = consults ? policyInputIfConsulted(this.edgeContext(), parsed) : undefined;
    if (!input) return this.routeAdmitted(parsed, json as JsonObject);
    // The edge intent layer and policy plugins may await: the decision (and this phase's answer) waits for them.
    const context = {
      config: this.config,
      policy: policyFor(this.config),
      plugins: this.plugins,
      agents: this.edgeAgents(),
      callerNode: this.requestHeadersSeen["x-gearbox-node"],
      requestId: this.requestId,
      trace: this.trace,
    };
    return decideConsulted(input, parsed, context).then(({ decided, edgeIntent }) => {
      this.edgeIntent = edgeIntent;
      return this.routeAdmitted(parsed, json as JsonObject, decided);
    });
  }

  /** Routes the call, then — with governance — admits it against the caller's limits (the model was checked at parse). */
  private routeAdmitted(parsed: ParsedCall, json: JsonObject, decided?: PolicyDecision): Outcome | Promise<Outcome> {
    const caller = this.caller;
    const governor = this.deps.governance?.governor;
    if (!caller || !governor) return this.route(parsed, json, decided);
    const outcome = this.route(parsed, json, decided);
    if (outcome.kind !== "continue") return outcome;
    return this.admit(governor, caller, parsed, json, outcome);
  }

  /**
   * Admission before anything goes upstream. Refused → the routed call is dropped and the client
   * gets the 429 naming the limit; a token or cost cap with `degrade_to_edge` → the call goes to
   * the edge instead (no upgrade: the cloud is what the cap forbids), admitted as an edge call.
   */
  private async admit(governor: Governor, caller: Caller, parsed: ParsedCall, json: JsonObject, routed: Outcome): Promise<Outcome> {
    this.trace?.step("gearbox.admission");
    const runaway = new RunawayStage(governor, caller, this.client, this.spec?.name ?? "", parsed, JSON.stringify(json));
    this.runaway = runaway;
    const { fingerprint, who: repeater } = runaway;
    // An edge answer that may be upgraded is admitted as a cloud call: the upgrade would cost it.
    const target = this.cascade && this.cascade.upgradeModel === undefined ? "edge" : "cloud";
    const decision = await governor.admit({ caller, model: parsed.model, estimate: this.estimate(parsed), fingerprint, repeater, target });
    if (decision.ok) {
      this.ticket = decision.ticket;
      runaway.admitted(decision.ticket);
      return routed;
    }
    this.decision = undefined;
    this.plan = undefined;
    // A repeat past the limit: the answer just given to this caller, when there is one, rather than a refusal.
    const replay = decision.runaway ? await runaway.replay(this.requestId) : undefined;
    if (replay) {
      this.cascade = undefined;
      this.status = 200;
      this.finish();
      if (this.trace) Object.assign(replay.headers, this.trace.responseHeaders());
      return { kind: "respond", response: replay };
    }
    if (decision.degradeToEdge) {
      const edge = this.edgeCascade(parsed, json, undefined, `degraded:${decision.error.code ?? "limit"}`);
      if (edge instanceof EdgeCascade) {
        const again = await governor.admit({ caller, model: parsed.model, estimate: this.estimate(parsed), fingerprint, repeater, target: "edge" });
        if (!again.ok) return this.reject(again.error);
        this.ticket = again.ticket;
        runaway.admitted(again.ticket);
        this.cascade = edge;
        return { kind: "continue", mutation: edge.requestMutation([...CONTROL_HEADERS, ...CLIENT_CREDENTIAL_HEADERS]) };
      }
    }
    this.cascade = undefined;
    return this.reject(decision.error);
  }

  /** Tokens and cost the call may use, for reservations (`routedEstimate`). */
  private estimate(parsed: ParsedCall): CallEstimate {
    return routedEstimate(parsed, this.config.providers, this.decision, this.cascade);
  }

  /** Tracing: the span of the call `outcome` sends upstream (edge or cloud), its `traceparent` on the request. */
  private traced(outcome: Outcome | Promise<Outcome>): Outcome | Promise<Outcome> {
    const trace = this.trace;
    if (!trace) return outcome;
    const operation = operationOf(this.spec?.name);
    const describe = (): UpstreamCall | undefined =>
      this.cascade
        ? { target: "edge", model: this.cascade.edgeModel }
        : this.decision
          ? { target: "cloud", model: this.decision.upstreamModel, provider: this.decision.provider }
          : undefined;
    return outcome instanceof Promise ? outcome.then((o) => traceUpstream(trace, o, operation, describe)) : traceUpstream(trace, outcome, operation, describe);
  }

  /** Sends a parsed call to the edge (cascade) or to its cloud provider. */
  private route(parsed: ParsedCall, json: JsonObject, decided?: PolicyDecision): Outcome {
    const edge = this.edgeCascade(parsed, json, decided);
    if (edge instanceof GatewayError) return this.reject(edge);
    if (edge) {
      this.cascade = edge;
      return { kind: "continue", mutation: edge.requestMutation([...CONTROL_HEADERS, ...CLIENT_CREDENTIAL_HEADERS]) };
    }
    // The client's route as the policy honours it: a header the policy ignores does not refuse a cloud call.
    const client = clientRoute(this.requestHeadersSeen[ROUTE_HEADER], policyFor(this.config).allowClientRoute);
    if (!client.ok) return this.reject(client.errors[0] ?? invalidRequest("Invalid route header."));
    const cloud = this.failoverRoute(parsed, cloudRoute(parsed, client.value, this.config.providers, this.query, this.requestId, CONTROL_HEADERS));
    this.decision = cloud.decision;
    if ("error" in cloud) return this.reject(cloud.error);
    this.plan = cloud.plan;
    return { kind: "continue", mutation: cloud.mutation };
  }

  /** Providers' health: the process's, else this config's. */
  get providerHealth(): ProviderHealth {
    return this.deps.providerHealth ?? healthFor(this.config, this.deps.logger);
  }

  /** A cloud call's failover (`resilience/request-failover.ts`); a primary whose breaker is open is skipped for a healthy member. */
  private failoverRoute(parsed: ParsedCall, cloud: CloudRoute): CloudRoute {
    if ("error" in cloud) return cloud;
    this.failover = new RequestFailover({
      config: this.config,
      health: this.providerHealth,
      parsed,
      primary: cloud.decision,
      requestHeaders: this.requestHeadersSeen,
    });
    const member = this.failover.steer();
    if (!member) return cloud;
    const steered = cloudRouteTo(
      { target: "cloud", provider: member.provider, upstreamModel: member.upstreamModel, reason: `fallback;${cloud.decision.reason}` },
      parsed,
      this.query,
      this.requestId,
      CONTROL_HEADERS,
    );
    return "error" in steered ? cloud : steered;
  }

  /** The front door retried the call (`resilience/retrying.ts`): `attempt` failed with `cause`. */
  retried(cause: string, attempt: number): void {
    this.failover?.retried(cause);
    if (this.decision) traceRetry(this.trace, cause, attempt, operationOf(this.spec?.name), this.decision);
  }

  /** True when an upstream that cannot be reached would be answered by the call's fallback chain. */
  get canFallBack(): boolean {
    return this.failover?.canFallBack ?? false;
  }

  responseHeaders(headers: Headers, endOfStream: false): Outcome;
  responseHeaders(headers: Headers, endOfStream: boolean): Outcome | Promise<Outcome>;
  responseHeaders(headers: Headers, endOfStream: boolean): Outcome | Promise<Outcome> {
    this.phase = "response_body";
    if (this.shadow) return CONTINUE;
    this.trace?.step("gearbox.response");
    if (this.cascade) {
      // The verdict (and every header the client sees) comes with the complete edge answer.
      this.status = Number(headers[":status"] ?? 0);
      this.responseHeadersSeen = headers;
      this.cascade.responseHeaders(this.status);
      return CONTINUE;
    }
    if (!this.spec || !this.plan || !this.decision) return CONTINUE;
    this.status = Number(headers[":status"] ?? 0);
    this.responseHeadersSeen = headers;
    const failing = this.failover?.answered(this.status, this.transport === "ext_proc") === true;
    const setHeaders: Headers = {
      "x-gearbox-route": this.decision.target,
      "x-gearbox-reason": this.policy ? `${this.policy.reason};${this.decision.reason}` : this.decision.reason,
      "x-gearbox-request-id": this.requestId,
      ...this.trace?.responseHeaders(),
      // The caller's own limits (the provider's x-ratelimit-* are about Gearbox's key, not the caller's).
      ...this.ticket?.headers,
      ...this.failover?.headers(),
    };
    if (failing && endOfStream && this.failover) return this.fallBack(this.failover, Buffer.alloc(0)).then(asLocalReply);
    // Only the provider headers fit for the client go on, the key redacted (`response-headers.ts`).
    const removeHeaders = screenProviderHeaders(headers, this.decision.provider, setHeaders);
    if (endOfStream) {
      this.finish();
      return { kind: "continue", mutation: { setHeaders, removeHeaders } };
    }
    const contentType = (headers["content-type"] ?? "").toLowerCase();
    const streamed = contentType.startsWith("text/event-stream") || contentType.startsWith("application/x-ndjson");
    if (streamed && this.status < 400) {
      this.stream = this.plan.stream(this.status, headers);
      this.cache.streamStarted(this.status);
      this.runaway?.streamStarted(this.status);
      // Every client schema Gearbox speaks streams SSE (Ollama's NDJSON is translated).
      if (!contentType.startsWith("text/event-stream")) setHeaders["content-type"] = "text/event-stream";
      // A rewritten stream's length is unknown in advance: let the codec chunk it.
      return { kind: "continue", mutation: { setHeaders, removeHeaders: [...removeHeaders, "content-length"] }, streamResponseBody: true };
    }
    return { kind: "continue", mutation: { setHeaders, removeHeaders } };
  }

  responseBody(chunk: Buffer, endOfStream: boolean): Outcome | Promise<Outcome> {
    if (this.shadow) return CONTINUE;
    if (this.cascade) {
      if (!endOfStream) return CONTINUE;
      const verdict = this.cascade.verdict(this.responseHeadersSeen, chunk);
      if (!(verdict instanceof Promise)) return this.cascaded(verdict);
      return verdict.then((outcome) => this.cascaded(outcome));
    }
    if (!this.spec || !this.plan) return CONTINUE;
    if (this.stream) {
      if (chunk.length > 0) this.firstByteAt ??= performance.now();
      const pushed = this.stream.push(chunk);
      const ended = endOfStream ? this.stream.end() : undefined;
      this.usage = ended?.usage ?? pushed.usage ?? this.usage;
      if (endOfStream) this.finish();
      const body = ended?.body ? Buffer.concat([pushed.body ?? chunk, ended.body]) : (pushed.body ?? chunk);
      this.cache.streamed(body, endOfStream);
      this.runaway?.streamed(body, endOfStream);
      if (pushed.body === undefined && ended?.body === undefined) return CONTINUE;
      return { kind: "continue", mutation: { body } };
    }
    if (!endOfStream) return CONTINUE;
    if (this.failover?.pending !== undefined) return this.fallBack(this.failover, chunk);
    return this.passOn(this.plan, chunk);
  }

  /** The provider's complete answer, translated for the client. */
  private passOn(plan: CallPlan, chunk: Buffer): Outcome {
    const answer = finalAnswer(plan, this.status, this.responseHeadersSeen, chunk, this.decision, this.requestId);
    const fallback = this.failover?.headers()["x-gearbox-fallback"];
    if (fallback !== undefined) answer.mutation = { ...answer.mutation, setHeaders: { ...answer.mutation?.setHeaders, "x-gearbox-fallback": fallback } };
    this.usage = answer.usage;
    if (answer.cacheable !== undefined)
      this.runaway?.answered(answer.mutation?.setHeaders?.["content-type"] ?? this.responseHeadersSeen["content-type"], answer.mutation?.body ?? chunk);
    this.finish(answer.error);
    if (answer.cacheable !== undefined) this.cache.store(answer.cacheable);
    return answer.mutation ? { kind: "continue", mutation: answer.mutation } : CONTINUE;
  }

  /**
   * The answer failed (429, 5xx, unreachable, timed out) before any byte reached the client: the
   * rest of the fallback chain is called, and the first member's answer replaces the failure
   * (the member is charged). None answers → the failure goes on as it came.
   */
  private async fallBack(failover: RequestFailover, chunk: Buffer): Promise<Outcome> {
    const plan = this.plan;
    const failed = { status: this.status, headers: this.responseHeadersSeen, body: chunk };
    const node = this.requestHeadersSeen["x-gearbox-node"];
    const context = {
      requestId: this.requestId,
      trace: this.trace,
      clientBody: this.body ?? Buffer.alloc(0),
      signal: this.gone.signal,
      edgeAgent: (model: string) => this.edgeAgents().pick(model, node)?.address,
    };
    const answer = await failover.run(failed, context).catch((err: unknown) => {
      // The client left during the chain: nothing to answer, the request is recorded (499).
      if (this.gone.signal.aborted) return undefined;
      throw err;
    });
    if (this.gone.signal.aborted) return CONTINUE;
    if (!answer) return plan ? this.passOn(plan, chunk) : CONTINUE;
    this.decision = answer.decision;
    this.status = answer.status;
    this.usage = answer.usage;
    if (answer.body.length > 0) this.firstByteAt ??= performance.now();
    const mutation = fallbackMutation(answer, this.responseHeadersSeen, {
      ...failover.headers(),
      "x-gearbox-request-id": this.requestId,
      ...this.trace?.responseHeaders(),
      ...this.ticket?.headers,
    });
    this.finish();
    return { kind: "continue", mutation };
  }

  /** Ends a cascaded request with its verdict; the record keeps the status the client gets (an upgrade replaces the edge's). */
  private cascaded(outcome: Outcome): Outcome {
    this.runaway?.edgeAnswered(outcome);
    const status = outcome.kind === "respond" ? outcome.response.status : Number(outcome.mutation?.setHeaders?.[":status"] ?? this.status);
    if (status > 0) this.status = status;
    this.finish();
    return outcome;
  }

  /** The client went away (or Envoy dropped the stream) before its answer: recorded as 499. */
  abort(reason: string): void {
    this.gone.abort(new Error(reason));
    if (this.spec && !this.logged) this.finish(new GatewayError(499, "server_error", reason));
  }

  /** The transport answered the client `error` itself (upstream unreachable 502, timed out 504): recorded as that. */
  fail(error: GatewayError): void {
    if (this.spec && !this.logged) this.finish(error);
  }

  /** An edge cascade for this call when it goes to an edge agent (`edge-choice.ts`); the policy's decision is kept for the record. */
  private edgeCascade(parsed: ParsedCall, raw: JsonObject, decided?: PolicyDecision, degraded?: string): EdgeCascade | GatewayError | undefined {
    const choice = chooseEdge(this.edgeContext(), parsed, raw, decided, degraded);
    if (choice.policy) this.policy = choice.policy;
    return choice.error ?? choice.cascade;
  }

  private edgeContext(): EdgeChoiceContext {
    return {
      config: this.config,
      agents: this.edgeAgents(),
      headers: this.requestHeadersSeen,
      endpoint: this.spec?.name,
      runtime: this.runtime,
      requestId: this.requestId,
      trace: this.trace,
      health: this.providerHealth,
    };
  }

  private reject(error: GatewayError): Outcome {
    this.finish(error);
    const response = toErrorResponse(error, this.requestId || undefined);
    if (this.trace) Object.assign(response.headers, this.trace.responseHeaders());
    return { kind: "respond", response };
  }

  /** Books what the call used against the caller's limits (real usage in place of the estimate). */
  private settleTicket(cost: number | null | undefined, error?: GatewayError): void {
    const ticket = this.ticket;
    if (!ticket) return;
    this.ticket = undefined;
    // Shadowed: nothing went upstream through Gearbox; the admission is handed back at once.
    if (this.shadow) return void ticket.release();
    const usage = settlementUsage(this.usage, this.cascade?.event, cost);
    void (error ? ticket.release(usage) : ticket.settle(usage));
  }

  /** Ends the request: settles its admission and hands its one record to telemetry (log line, metrics). */
  private finish(error?: GatewayError): void {
    if (this.logged) return;
    this.logged = true;
    this.phase = "done";
    const record = requestRecord({
      requestId: this.requestId,
      traceId: this.trace?.traceId,
      transport: this.transport,
      config: this.config,
      caller: this.caller,
      endpoint: this.spec?.name,
      parsed: this.parsed,
      decision: this.decision,
      cascade: this.cascade,
      policy: this.policy,
      edgeIntent: this.edgeIntent,
      cache: this.cache,
      status: this.status,
      error,
      usage: this.usage,
      startedAt: this.startedAt,
      firstByteAt: this.firstByteAt,
      now: performance.now(),
      shadow: this.shadow,
      runaway: this.runaway?.outcome,
      attempts: this.failover?.log,
    });
    const cost = record.cost_usd;
    if (typeof cost === "number") this.runtime.cloudSpend.add(cost);
    this.settleTicket(cost, error);
    this.runaway?.finished(error);
    const target = record.route === "cache" ? undefined : record.route;
    if (target && !error) {
      const signals = this.runtime;
      signals.sticky.set(this.requestHeadersSeen["x-gearbox-conversation-id"], target);
      if (target === "cloud" && !this.cascade && this.status === 200 && !this.parsed?.stream) signals.cloudLatency.record(performance.now() - this.startedAt);
    }
    (this.deps.telemetry ?? logOnly(this.deps.logger)).request(record, this.config);
    endRequestTrace(this.trace, record, this.parsed, this.decision?.provider, error);
  }
}
