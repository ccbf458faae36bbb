/**
 * The confidence cascade for one request routed to an edge agent. The edge is asked for a
 * complete (non-streamed) answer, so no byte reaches the client before the verdict; the answer
 * passes when its confidence (the agent's `x-gearbox-confidence`) reaches
 * `route.fallback.confidence_threshold`, else — or when the agent fails or is saturated — the
 * same canonical request goes to the cloud and that answer replaces the edge's. A client that
 * forced the edge (`x-gearbox-route: edge`, data that must stay in) is never upgraded.
 */
import type { ChatRequest, Usage } from "../../common/canonical/types.ts";
import type { GatewayConfig } from "../config/load.ts";
import { GatewayError, toErrorResponse } from "../../common/errors.ts";
import type { Headers, Mutation, Outcome } from "../processor/outcome.ts";
import { callCostUsd, roundUsd } from "../providers/cost.ts";
import { resolveProvider } from "../routing/provider-route.ts";
import { isObject, type JsonObject } from "../../common/schemas/fields.ts";
import { toOpenAIChatRequest } from "../../common/schemas/openai-chat-emit.ts";
import { planChat } from "../translators/select.ts";
import { callCloud } from "./cloud-call.ts";
import type { ProviderHealth } from "../resilience/provider-health.ts";
import type { EdgeAgentRef } from "../edge/agents.ts";
import { sseFromCompletion } from "../../common/schemas/sse-from-completion.ts";
import type { RequestTrace } from "../telemetry/request-trace.ts";
import { GEARBOX, GEN_AI, genAiProviderName, HTTP } from "../../common/telemetry/tracing-attributes.ts";
import type { CalibrationTag, OnlineCalibration } from "../routing/calibration/online/online.ts";
import { answerText, shadowAnswer } from "./shadow-call.ts";

export interface CascadeEvent {
  edge_model: string;
  edge_agent: string;
  edge_status: number;
  edge_confidence: number | null;
  edge_latency_ms: number;
  edge_input_tokens?: number;
  edge_output_tokens?: number;
  upgraded: boolean;
  upgrade_reason?: string;
  cloud_provider?: string;
  cloud_status?: number;
  cloud_latency_ms?: number;
  cloud_model?: string;
  cloud_input_tokens?: number;
  cloud_output_tokens?: number;
  /** What the upgrade cost at the provider's list price; `null` when the model has no price. */
  cloud_cost_usd?: number | null;
}

export interface CascadeOptions {
  config: GatewayConfig;
  agent: EdgeAgentRef;
  edgeModel: string;
  /** The cloud model a weak answer is upgraded to (the route decision's); absent when the answer is final (a forced edge). */
  upgradeModel: string | undefined;
  request: ChatRequest;
  rawRequest: JsonObject;
  requestId: string;
  /** Why the request went to the edge (`client_hint:edge`, `edge_model`, a policy reason). */
  routeReason: string;
  /** The request's trace: the edge call's span is ended with the verdict, the upgrade gets its own. */
  trace?: RequestTrace | undefined;
  /** Providers' breakers and retry budgets: the upgrade call is retried like any of Gearbox's own. */
  health?: ProviderHealth | undefined;
  /** Online calibration of the threshold that sent this request here: a kept answer may be shadowed. */
  calibration?: { tag: CalibrationTag; online: OnlineCalibration } | undefined;
}

export class EdgeCascade {
  private readonly started = performance.now();
  private status = 0;
  event: CascadeEvent | undefined;
  /** Online calibration's part, for the request log: the threshold and whether the kept answer was shadowed. */
  calibration: (CalibrationTag & { shadowed: boolean }) | undefined;

  constructor(private readonly o: CascadeOptions) {}

  /** Why the request went to the edge (`client_hint:edge`, `edge_model`, a policy reason, `degraded:<limit>`). */
  get routeReason(): string {
    return this.o.routeReason;
  }

  /** The model the edge agent runs for this call. */
  get edgeModel(): string {
    return this.o.edgeModel;
  }

  /** The cloud model a weak answer would be upgraded to; undefined when the answer is final (forced edge). */
  get upgradeModel(): string | undefined {
    return this.o.upgradeModel;
  }

  /** The request mutation that sends the call to the edge agent (non-streamed, edge model). */
  requestMutation(removable: string[]): Mutation {
    const body = Buffer.from(
      JSON.stringify(toOpenAIChatRequest(Object.assign({}, this.o.request, { model: this.o.edgeModel, stream: false, includeUsage: undefined }))),
    );
    const setHeaders: Headers = {
      ":path": "/v1/chat/completions",
      "content-type": "application/json",
      "content-length": String(body.length),
      "x-gearbox-upstream": "edge",
      "x-gearbox-request-id": this.o.requestId,
      "accept-encoding": "identity",
    };
    const removeHeaders = removable.filter((h) => setHeaders[h] === undefined);
    return { setHeaders, removeHeaders, body, clearRouteCache: true, edgeEndpoint: this.o.agent.address };
  }

  responseHeaders(status: number): void {
    this.status = status;
  }

  /** The verdict on the complete edge answer: pass it on, or replace it with the cloud's. */
  verdict(headers: Headers, body: Buffer): Outcome | Promise<Outcome> {
    const edgeLatency = performance.now() - this.started;
    const threshold = this.o.config.route.fallback.confidence_threshold;
    const confidence = Number(headers["x-gearbox-confidence"]);
    const scored = Number.isFinite(confidence) ? confidence : null;
    const event: CascadeEvent = {
      edge_model: this.o.edgeModel,
      edge_agent: this.o.agent.address,
      edge_status: this.status,
      edge_confidence: scored,
      edge_latency_ms: Math.round(edgeLatency * 100) / 100,
      upgraded: false,
    };
    this.event = event;
    const completion = this.status === 200 ? parseJson(body) : undefined;
    const edgeUsage = completion === undefined ? undefined : usageOf(completion);
    if (edgeUsage) {
      event.edge_input_tokens = edgeUsage.inputTokens;
      event.edge_output_tokens = edgeUsage.outputTokens;
    }
    const confident = completion !== undefined && scored !== null && scored >= threshold;
    this.traceEdgeCall(event);
    const upgradeModel = this.o.upgradeModel;
    if (confident || upgradeModel === undefined) {
      if (completion === undefined) return this.answer(this.status, body, "edge", "edge_forced", headers);
      if (confident && upgradeModel !== undefined) this.calibrate(completion, upgradeModel);
      return this.answer(
        200,
        this.clientBytes(completion),
        "edge",
        confident ? `edge_confident:${scored}>=${threshold}` : `edge_forced:confidence=${scored ?? "none"}`,
        headers,
      );
    }
    event.upgraded = true;
    event.upgrade_reason = this.status !== 200 ? `edge_status:${this.status}` : scored === null ? "edge_unscored" : `low_confidence:${scored}<${threshold}`;
    return this.upgradeToCloud(event, upgradeModel);
  }

  private async upgradeToCloud(event: CascadeEvent, fallbackModel: string): Promise<Outcome> {
    const resolved = resolveProvider(fallbackModel, this.o.config.providers);
    if (!resolved.ok) return this.error(resolved.errors[0] ?? new GatewayError(502, "upstream_error", "No cloud provider for the upgrade."), event);
    const { provider, upstreamModel } = resolved.value;
    const request: ChatRequest = Object.assign({}, this.o.request, { model: fallbackModel, stream: false });
    delete request.includeUsage;
    event.cloud_provider = provider.name;
    event.cloud_model = upstreamModel;
    const trace = this.o.trace;
    const span = trace?.call(
      `chat ${upstreamModel}`,
      {
        [GEN_AI.operationName]: "chat",
        [GEN_AI.requestModel]: upstreamModel,
        [GEN_AI.providerName]: genAiProviderName(provider.kind, provider.name),
        [HTTP.serverAddress]: provider.baseUrl.hostname,
        [GEARBOX.upstream]: "cloud",
        [GEARBOX.upgradeReason]: event.upgrade_reason ?? "",
      },
      trace.current,
    );
    try {
      const plan = planChat("openai", provider, request, Object.assign({}, this.o.rawRequest, { stream: false, model: fallbackModel }), {
        upstreamModel,
        forceStreamUsage: false,
      });
      const retries = this.o.health && { health: this.o.health, retry: this.o.config.resilience.retry };
      const answer = await callCloud(provider, plan, Buffer.from(JSON.stringify(toOpenAIChatRequest(request))), undefined, span?.headers(), retries);
      event.cloud_status = answer.status;
      event.cloud_latency_ms = Math.round(answer.latencyMs * 100) / 100;
      if (answer.usage) {
        event.cloud_input_tokens = answer.usage.inputTokens;
        event.cloud_output_tokens = answer.usage.outputTokens;
        const cost = callCostUsd(provider, upstreamModel, answer.usage);
        event.cloud_cost_usd = cost === undefined ? null : roundUsd(cost);
      }
      const completion = answer.status === 200 ? parseJson(answer.bytes) : undefined;
      span?.end(answer.status >= 400 ? { message: `the cloud answered ${answer.status}`, status: answer.status } : undefined, {
        [HTTP.status]: answer.status,
        ...(answer.usage && { [GEN_AI.inputTokens]: answer.usage.inputTokens, [GEN_AI.outputTokens]: answer.usage.outputTokens }),
        ...(typeof completion?.model === "string" && { [GEN_AI.responseModel]: completion.model }),
      });
      const bytes = completion ? this.clientBytes(completion) : answer.bytes;
      return this.answer(answer.status, bytes, "cloud", `upgrade:${event.upgrade_reason ?? ""}`, {}, event.upgrade_reason);
    } catch (err) {
      const failed = err instanceof GatewayError ? err : new GatewayError(502, "upstream_error", "The cloud upgrade failed.", { cause: err });
      span?.end(failed);
      return this.error(failed, event);
    }
  }

  /** A kept edge answer on an auto route: online calibration may shadow it (a background cloud call the client never sees). */
  private calibrate(completion: JsonObject, cloudModel: string): void {
    const c = this.o.calibration;
    if (!c) return;
    const { config, request } = this.o;
    const ask = (messages: ChatRequest["messages"]) => shadowAnswer(config, cloudModel, Object.assign({}, request, { messages, stream: false }));
    const judgeAsk = (prompt: string) =>
      shadowAnswer(config, cloudModel, Object.assign({}, request, { messages: [{ role: "user", content: prompt }], stream: false, temperature: 0 }));
    const shadowed = c.online.kept(c.tag, config.route, request.messages, answerText(completion), ask, judgeAsk);
    this.calibration = Object.assign({}, c.tag, { shadowed });
  }

  /** Ends the edge call's span (started when the request went out) with what the edge answered. */
  private traceEdgeCall(event: CascadeEvent): void {
    const span = this.o.trace?.upstream;
    if (!span?.recording) return;
    span.end(
      event.edge_status >= 400 || event.edge_status === 0 ? { message: `the edge agent answered ${event.edge_status}`, status: event.edge_status } : undefined,
      {
        [HTTP.status]: event.edge_status,
        [GEN_AI.responseModel]: this.o.edgeModel,
        ...(event.edge_confidence !== null && { [GEARBOX.edgeConfidence]: event.edge_confidence }),
        ...(event.edge_input_tokens !== undefined && { [GEN_AI.inputTokens]: event.edge_input_tokens }),
        ...(event.edge_output_tokens !== undefined && { [GEN_AI.outputTokens]: event.edge_output_tokens }),
      },
    );
  }

  /** A complete OpenAI completion in the form the client asked for (JSON or SSE). */
  private clientBytes(completion: JsonObject): Buffer {
    return this.o.request.stream ? sseFromCompletion(completion, this.o.request.includeUsage === true) : Buffer.from(JSON.stringify(completion));
  }

  private answer(status: number, body: Buffer, route: "edge" | "cloud", reason: string, edgeHeaders: Headers, fallback?: string): Outcome {
    const sse = this.o.request.stream && status === 200;
    const setHeaders: Headers = {
      ":status": String(status),
      "content-type": sse ? "text/event-stream" : "application/json",
      "content-length": String(body.length),
      "x-gearbox-route": route,
      "x-gearbox-reason": `${reason};${this.o.routeReason}`,
      "x-gearbox-request-id": this.o.requestId,
      ...this.o.trace?.responseHeaders(),
    };
    if (edgeHeaders["x-gearbox-confidence"]) setHeaders["x-gearbox-confidence"] = edgeHeaders["x-gearbox-confidence"];
    if (fallback) setHeaders["x-gearbox-fallback"] = fallback;
    return { kind: "continue", mutation: { body, setHeaders } };
  }

  private error(err: GatewayError, event: CascadeEvent): Outcome {
    event.cloud_status = err.status;
    const { body } = toErrorResponse(err, this.o.requestId);
    return this.answer(err.status, body, "cloud", `upgrade_failed:${event.upgrade_reason ?? ""}`, {}, event.upgrade_reason);
  }
}

/** Token counts of an OpenAI completion's `usage`, when it has them. */
function usageOf(completion: JsonObject): Usage | undefined {
  const usage = completion.usage;
  if (!isObject(usage) || typeof usage.prompt_tokens !== "number" || typeof usage.completion_tokens !== "number") return undefined;
  return { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens, totalTokens: usage.prompt_tokens + usage.completion_tokens };
}

function parseJson(body: Buffer): JsonObject | undefined {
  try {
    const json: unknown = JSON.parse(body.toString("utf8"));
    return isObject(json) && Array.isArray(json.choices) ? json : undefined;
  } catch {
    return undefined;
  }
}
