/**
 * The device decision and outcome API's logic: "ask the gateway first".
 *
 * decide: the caller's key (its tenant's IP and model allowlists), the chat request parsed as the
 *   front door parses it, then `decideRoute` over the gateway's snapshot with the device as the
 *   only edge agent (`directory.ts`). A device route is admitted against the tenant's and key's
 *   limits as the processor admits an edge call (an upgradable answer as a cloud call: the upgrade
 *   would cost it; a cap that degrades forces the device), and held, with an `EdgeCascade`, until
 *   the outcome or `devices.decision_ttl_ms`. A cloud route is only an instruction: the SDK sends
 *   the call to `/v1/chat/completions`, where the processor takes it as any other.
 * outcome: the device's confidence and tokens go through the held cascade's verdict, exactly as
 *   an edge agent's answer does (the device's text never leaves it: the verdict sees an answer
 *   with no choices): kept, or upgraded — the gateway calls the cloud itself and the device gets
 *   that completion. Either way one request record (log line, metrics: edge share, cost avoided,
 *   upgrades) with the cascade event, and the admission settled with what was used.
 * data boundary: the call is screened as the processor screens one (`boundary/stage.ts`): a
 *   blocked category is the same 403; an edge-only one is a device route with no upgrade, or the
 *   503 `data_boundary_edge_only` when the device cannot take it, never a cloud instruction; a
 *   redacted one is routed on the masked text, its upgrade sent masked and its answer restored.
 *   A cloud instruction sends the SDK to `/v1/chat/completions`, which screens the call again.
 */
import { randomUUID } from "node:crypto";
import type { ChatRequest } from "../../common/canonical/types.ts";
import { GatewayError, invalidRequest } from "../../common/errors.ts";
import { fail, ok, type Result } from "../../common/result.ts";
import type { JsonObject } from "../../common/schemas/fields.ts";
import type { Logger } from "../../common/telemetry/logger.ts";
import { edgeOnlyUnavailable, screen, type BoundaryState } from "../boundary/stage.ts";
import { EdgeCascade } from "../cascade/cascade.ts";
import { endpointFor } from "../endpoints/registry.ts";
import type { ParsedCall } from "../endpoints/spec.ts";
import { authenticate, checkModel } from "../governance/auth.ts";
import type { Ticket } from "../governance/governor.ts";
import type { Caller } from "../governance/model.ts";
import { routedEstimate, settlementUsage } from "../processor/admission.ts";
import type { Governance } from "../processor/context.ts";
import type { Headers } from "../processor/outcome.ts";
import { decideConsulted } from "../processor/edge-intent.ts";
import { parseBody } from "../processor/request-checks.ts";
import { requestRecord } from "../processor/request-record.ts";
import type { PolicyDecision } from "../routing/policy/index.ts";
import { decideRoute, policyConsultation, readClientRoute, type EdgeRoute, type RouteFacts, type RouteRequest } from "../routing/route.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { RuntimeSnapshot } from "../runtime/snapshot.ts";
import { logOnly, type Telemetry } from "../telemetry/telemetry.ts";
import { DeviceDirectory, deviceAddress, deviceSnapshot } from "./directory.ts";
import type { DeviceRegistry, DeviceSession, Held } from "./registry.ts";
import { outcomeSchema, parseMessage, type Outcome } from "./wire.ts";

export const DEVICE_ID_HEADER = "x-gearbox-device-id";

export interface DecisionDeps {
  runtime: Runtime;
  registry: DeviceRegistry;
  logger: Logger;
  governance?: Governance;
  telemetry?: Telemetry;
}

/** The routing instruction a device gets. */
export type Instruction =
  | {
      target: "device";
      decision_id: string;
      model: string;
      reason: string;
      policy_version: number;
      confidence_threshold: number;
      /** A weak answer is upgraded (reported through the outcome); false: the local answer is final. */
      upgrade: boolean;
      expires_in_ms: number;
    }
  | { target: "cloud"; model: string; provider: string; reason: string; policy_version: number };

/** What an outcome answers: keep the local answer, or the cloud's completion in its place. */
export type Verdict =
  | { action: "keep"; route: "device"; reason: string }
  | { action: "upgrade"; route: "cloud"; reason: string; fallback: string; completion: unknown }
  | { action: "error"; status: number; body: Buffer };

interface Pending extends Held {
  readonly id: string;
  readonly tenant: string;
  readonly deviceId: string;
  readonly caller: Caller | undefined;
  readonly parsed: ParsedCall;
  readonly cascade: EdgeCascade;
  readonly snapshot: RuntimeSnapshot;
  readonly startedAt: number;
  /** The policy's decision when it was consulted, and the edge intent layer's note: for the request record. */
  readonly policy: PolicyDecision | undefined;
  readonly edgeIntent: string | undefined;
  /** What the data boundary did to the call (the upgrade's answer is restored with it). */
  readonly boundary: BoundaryState | undefined;
  ticket: Ticket | undefined;
  timer: NodeJS.Timeout;
}

/** The identity a device request carries: its headers and socket address. */
export interface DeviceRequest {
  headers: Headers;
  address: string | undefined;
}

/** How a decision ended: a cloud instruction, refused (an error answer), or a device decision's outcome (kept, upgraded, upgrade failed, released without one). */
export type DecisionOutcome = "cloud" | "refused" | "kept" | "upgraded" | "upgrade_failed" | "released";
export const DECISION_OUTCOMES: readonly DecisionOutcome[] = ["cloud", "refused", "kept", "upgraded", "upgrade_failed", "released"];

export class DeviceDecisions {
  private readonly pending = new Map<string, Pending>();
  /** Decisions since the start, by how they ended (device decisions count when their outcome comes or they are released). */
  readonly outcomes: Record<DecisionOutcome, number> = { cloud: 0, refused: 0, kept: 0, upgraded: 0, upgrade_failed: 0, released: 0 };

  constructor(private readonly deps: DecisionDeps) {}

  /** Decisions awaiting an outcome on this replica. */
  get size(): number {
    return this.pending.size;
  }

  /** Who is calling (401/403 as for a model call); without governance, the anonymous `default` tenant. */
  async caller(req: DeviceRequest): Promise<Result<{ caller: Caller | undefined; tenant: string }, GatewayError>> {
    const governance = this.deps.governance;
    if (!governance) return ok({ caller: undefined, tenant: "default" });
    const who = await authenticate({ headers: req.headers, ...(req.address !== undefined && { sourceAddress: req.address }) }, governance.auth);
    if (!who.ok) return who;
    return ok({ caller: who.value, tenant: who.value.tenant.id });
  }

  async decide(req: DeviceRequest, body: Buffer): Promise<Result<Instruction, GatewayError>> {
    const decided = await this.instruction(req, body);
    if (!decided.ok) this.outcomes.refused++;
    else if (decided.value.target === "cloud") this.outcomes.cloud++;
    return decided;
  }

  private async instruction(req: DeviceRequest, body: Buffer): Promise<Result<Instruction, GatewayError>> {
    const who = await this.caller(req);
    if (!who.ok) return who;
    const { caller, tenant } = who.value;
    const deviceId = req.headers[DEVICE_ID_HEADER];
    if (!deviceId)
      return fail(invalidRequest(`The ${DEVICE_ID_HEADER} header is required: it names the device asking.`, DEVICE_ID_HEADER, "device_id_required"));
    const base = this.deps.runtime.current();
    const spec = endpointFor("/v1/chat/completions");
    if (!spec) throw new Error("the chat completions endpoint spec is missing");
    const read = parseBody(spec, body, base.config.limits.max_request_bytes);
    if (!read.ok) return read;
    if (caller) {
      const allowed = checkModel(caller, read.value.parsed.model);
      if (!allowed.ok) return allowed;
    }
    // The data boundary, as on the gateway's own path (`request-phase.ts`): a blocked category is the
    // same refusal; an edge-only one keeps the call on the device (or refuses it), never the cloud; a
    // redacted one is decided, and upgraded, on the masked text, the upgrade's answer restored.
    const screened = screen(base.config.data_boundary, tenant, spec.name, read.value.json as JsonObject, body);
    if (screened.kind === "refused") return fail(screened.error);
    const boundary = screened.kind === "screened" ? screened.state : undefined;
    const maskedBody = screened.kind === "screened" ? screened.body : undefined;
    const masked = maskedBody ? spec.parse(maskedBody) : undefined;
    if (masked && !masked.ok) throw new Error(`a masked chat body did not parse: ${masked.errors.map((e) => e.message).join("; ")}`);
    const parsed = masked ? masked.value : read.value.parsed;
    const json = maskedBody ?? read.value.json;
    const session = this.deps.registry.device(tenant, deviceId);
    // The device's models the tenant may use; a device with no live session has none: the cloud.
    const usable = (session?.models ?? []).map((m) => m.id).filter((m) => !caller || checkModel(caller, m).ok);
    const directory = new DeviceDirectory(deviceAddress(tenant, deviceId), usable);
    const snapshot = deviceSnapshot(base, directory, session?.active);
    const routeReq: RouteRequest = {
      endpoint: spec.name,
      parsed,
      headers: req.headers,
      snapshot,
      state: this.deps.runtime.state,
      client: readClientRoute(req.headers, snapshot),
      tenant,
    };
    const version = this.deps.registry.policy().version;
    // An edge-only call consults no policy (nothing may send it elsewhere), as in the processor.
    const { consulted, edgeIntent } = boundary?.edgeOnly ? {} : await this.consult(base, routeReq);
    const facts: RouteFacts = { ...(consulted && { consulted }), ...(boundary?.edgeOnly && { edgeOnly: edgeOnlyUnavailable(boundary.edgeOnly) }) };
    let route = decideRoute(routeReq, facts);
    if (route.kind === "reject") return fail(route.error);
    if (route.kind === "cache") throw new Error("a device decision has no cache facts");
    if (route.kind === "cloud") {
      const reason = route.policy ? `${route.policy.reason};${route.reason}` : route.reason;
      return ok({
        target: "cloud",
        model: parsed.model,
        provider: route.provider.name,
        reason: session ? reason : `device_not_connected;${reason}`,
        policy_version: version,
      });
    }
    if (!session) throw new Error("a device route without a device session");
    const cascade = (r: EdgeRoute) =>
      new EdgeCascade({
        config: snapshot.config,
        agent: r.agent,
        edgeModel: r.model,
        upgradeModel: r.upgradeTo,
        request: chatOf(parsed),
        rawRequest: json as JsonObject,
        requestId: randomUUID(),
        routeReason: r.reason,
        health: snapshot.providerHealth,
      });
    let held = cascade(route);
    let ticket: Ticket | undefined;
    const governor = this.deps.governance?.governor;
    if (caller && governor) {
      const estimate = () => routedEstimate(parsed, snapshot.config.providers, undefined, held);
      const admitted = await governor.admit({ caller, model: parsed.model, estimate: estimate(), target: route.upgradeTo === undefined ? "edge" : "cloud" });
      if (admitted.ok) ticket = admitted.ticket;
      else {
        // A cap that degrades: the device answers, final (the cloud is what the cap forbids).
        const degraded = admitted.degradeToEdge ? decideRoute(routeReq, { ...facts, degraded: admitted.error }) : undefined;
        if (degraded?.kind !== "edge") return fail(admitted.error);
        route = degraded;
        held = cascade(degraded);
        const again = await governor.admit({ caller, model: parsed.model, estimate: estimate(), target: "edge" });
        if (!again.ok) return fail(again.error);
        ticket = again.ticket;
      }
    }
    const ttl = snapshot.config.devices.decision_ttl_ms;
    const policy = route.policy ?? consulted;
    const pending = this.hold(session, { tenant, deviceId, caller, parsed, cascade: held, snapshot, ticket, policy, edgeIntent, boundary }, ttl);
    return ok({
      target: "device",
      decision_id: pending.id,
      model: route.model,
      reason: route.reason,
      policy_version: version,
      confidence_threshold: snapshot.config.route.fallback.confidence_threshold,
      upgrade: route.upgradeTo !== undefined,
      expires_in_ms: ttl,
    });
  }

  /**
   * What the processor consults before a decision that may await (`request-phase.ts`): with
   * plugins or the edge intent layer on, the policy's decision through `decideConsulted` (the
   * edge intent layer asks the gateway's own edge agents, never the device), which the route then
   * takes as given. Undefined when the route would not consult the policy or nothing awaits.
   */
  private async consult(base: RuntimeSnapshot, req: RouteRequest): Promise<{ consulted?: PolicyDecision; edgeIntent?: string }> {
    const { plugins, policy, edgeAgents, config } = base;
    if (plugins.length === 0 && !config.route.edge_intent.enable) return {};
    const input = policyConsultation(req);
    if (!input) return {};
    const { decided, edgeIntent } = await decideConsulted(input, req.parsed, {
      config,
      policy,
      plugins,
      agents: edgeAgents,
      requestId: randomUUID(),
      trace: undefined,
    });
    return { consulted: decided, ...(edgeIntent !== undefined && { edgeIntent }) };
  }

  async outcome(req: DeviceRequest, body: unknown): Promise<Result<Verdict, GatewayError>> {
    const who = await this.caller(req);
    if (!who.ok) return who;
    const read = parseMessage(outcomeSchema, body, "outcome");
    if (!read.ok) return fail(invalidRequest(read.errors.join("; "), "outcome", "invalid_outcome"));
    const o = read.value;
    const p = this.pending.get(o.decision_id);
    if (!p || p.tenant !== who.value.tenant)
      return fail(
        new GatewayError(404, "not_found_error", `No decision '${o.decision_id}' awaits an outcome (unknown, already reported or expired).`, {
          code: "unknown_decision",
          param: "decision_id",
        }),
      );
    this.forget(p);
    return ok(await this.judge(p, o));
  }

  /** Releases every held decision (shutdown). */
  close(): void {
    for (const p of [...this.pending.values()]) p.release("shutdown");
  }

  private hold(session: DeviceSession, parts: Omit<Pending, "id" | "timer" | "startedAt" | "release">, ttlMs: number): Pending {
    const max = parts.snapshot.config.devices.max_pending_decisions;
    // The oldest decision goes first when a device holds too many (insertion order).
    while (session.decisions.size >= max) {
      const oldest = session.decisions.values().next().value;
      if (!oldest) break;
      oldest.release("too_many_pending");
    }
    const id = `dd_${randomUUID()}`;
    const p: Pending = {
      ...parts,
      id,
      startedAt: performance.now(),
      timer: setTimeout(() => p.release("expired"), ttlMs).unref(),
      release: (reason: string) => {
        if (!this.pending.has(id)) return;
        this.forget(p);
        this.outcomes.released++;
        void p.ticket?.release();
        p.ticket = undefined;
        this.deps.logger.debug({ tenant: p.tenant, decision: id, reason }, "device decision released without an outcome");
      },
    };
    this.pending.set(id, p);
    session.decisions.set(id, p);
    return p;
  }

  private forget(p: Pending): void {
    clearTimeout(p.timer);
    this.pending.delete(p.id);
    this.deps.registry.device(p.tenant, p.deviceId)?.decisions.delete(p.id);
  }

  /** The cascade's verdict on the device's answer, recorded and settled as an edge answer is. */
  private async judge(p: Pending, o: Outcome): Promise<Verdict> {
    const usage = o.usage && { prompt_tokens: o.usage.prompt_tokens, completion_tokens: o.usage.completion_tokens };
    const status = o.status === "ok" ? 200 : 500;
    const local = { id: p.cascade.edgeModel, object: "chat.completion", model: p.cascade.edgeModel, choices: [], ...(usage && { usage }) };
    const headers: Headers = o.confidence === null ? {} : { "x-gearbox-confidence": String(o.confidence) };
    p.cascade.responseHeaders(status);
    const out = await p.cascade.verdict(headers, Buffer.from(JSON.stringify(local)));
    const event = p.cascade.event;
    const set = out.kind === "continue" ? (out.mutation?.setHeaders ?? {}) : {};
    const answerStatus = out.kind === "continue" ? Number(set[":status"] ?? 200) : out.response.status;
    const sent = out.kind === "continue" ? (out.mutation?.body ?? Buffer.alloc(0)) : out.response.body;
    const answer = p.boundary ? p.boundary.restoreBody(Buffer.isBuffer(sent) ? sent : Buffer.from(String(sent))) : sent;
    const upgraded = event?.upgraded === true;
    const cloudUsage =
      upgraded && event?.cloud_input_tokens !== undefined
        ? {
            inputTokens: event.cloud_input_tokens,
            outputTokens: event.cloud_output_tokens ?? 0,
            totalTokens: event.cloud_input_tokens + (event.cloud_output_tokens ?? 0),
          }
        : undefined;
    const record = requestRecord({
      requestId: set["x-gearbox-request-id"] ?? p.id,
      traceId: undefined,
      transport: "front_door",
      config: p.snapshot.config,
      caller: p.caller,
      endpoint: "chat_completions",
      parsed: p.parsed,
      decision: undefined,
      cascade: p.cascade,
      policy: p.policy,
      edgeIntent: p.edgeIntent,
      boundary: p.boundary,
      cache: { result: undefined, layer: undefined, similarity: undefined, hitCompletion: undefined },
      status: answerStatus,
      error: answerStatus >= 400 ? new GatewayError(answerStatus, "upstream_error", "The cloud upgrade failed.", { code: "upgrade_failed" }) : undefined,
      usage: cloudUsage,
      startedAt: p.startedAt,
      firstByteAt: undefined,
      now: performance.now(),
      shadow: false,
    });
    const cost = record.cost_usd;
    if (typeof cost === "number") this.deps.runtime.state.cloudSpend.add(cost);
    const ticket = p.ticket;
    p.ticket = undefined;
    if (ticket) void ticket.settle(settlementUsage(cloudUsage, event, cost));
    // After the verdict is answered, as the processor writes a record once its response is out:
    // the log line is a synchronous write (190 µs a line to a pipe in bench:devices).
    const telemetry = this.deps.telemetry ?? logOnly(this.deps.logger);
    setImmediate(() => telemetry.request(record, p.snapshot.config));
    this.outcomes[answerStatus >= 400 ? "upgrade_failed" : upgraded ? "upgraded" : "kept"]++;
    if (answerStatus >= 400) return { action: "error", status: answerStatus, body: answer };
    const reason = set["x-gearbox-reason"] ?? "";
    if (!upgraded) return { action: "keep", route: "device", reason };
    return { action: "upgrade", route: "cloud", reason, fallback: set["x-gearbox-fallback"] ?? "", completion: JSON.parse(answer.toString("utf8")) as unknown };
  }
}

function chatOf(parsed: ParsedCall): ChatRequest {
  if (parsed.call.endpoint !== "chat") throw new Error("a device route for a call that is not a chat");
  // The device answers whole; an upgrade is asked for whole too (the SDK streams it to the app).
  return { ...parsed.call.request, stream: false };
}
