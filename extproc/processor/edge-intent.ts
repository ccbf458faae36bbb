/**
 * The edge intent layer as the processor applies it: when the built-in classifier had no
 * confident label and `route.edge_intent` is on, the edge model is asked; its label replaces the
 * intent when confident enough. Any failure leaves the input as it was.
 */
import type { EdgeDirectory } from "../edge/agents.ts";
import type { GatewayConfig } from "../config/load.ts";
import type { Message } from "../../common/canonical/types.ts";
import { classifyOnEdge } from "../edge/intent-call.ts";
import { decidePolicy, decideWithPlugins, type PolicyConfig, type PolicyDecision, type PolicyInput, type PolicyPlugin } from "../routing/policy/index.ts";
import type { ParsedCall } from "../endpoints/spec.ts";
import type { RequestTrace } from "../telemetry/request-trace.ts";

export interface EdgeIntentOutcome {
  input: PolicyInput;
  /** For the request log (`code_gen@0.910`, `timeout`, `no_label`…); absent when not asked. */
  note?: string;
  /** The edge's label is in `input`. */
  used: boolean;
}

export interface EdgeIntentContext {
  config: GatewayConfig;
  policy: PolicyConfig;
  agents: EdgeDirectory;
  messages: readonly Message[];
  callerNode?: string;
  requestId: string;
  /** Trace context for the agent (`traceparent`), when the request is traced. */
  traceHeaders?: Record<string, string>;
}

export async function withEdgeIntent(input: PolicyInput, ctx: EdgeIntentContext): Promise<EdgeIntentOutcome> {
  const options = ctx.config.route.edge_intent;
  const policy = ctx.policy;
  const hinted = policy.allowClientIntent && input.clientIntentHint !== undefined && input.clientIntentHint !== "";
  if (!options.enable || hinted) return { input, used: false };
  if (input.intent !== "unknown" && input.intentConfidence >= policy.intentMinConfidence) return { input, used: false };
  const model = options.model ?? ctx.config.edge.default_model;
  const agent = model === undefined ? undefined : ctx.agents.pick(model, ctx.callerNode);
  if (model === undefined || agent === undefined) return { input, note: "no_agent", used: false };
  const result = await classifyOnEdge(ctx.messages, {
    address: agent.address,
    model,
    timeoutMs: options.timeout_ms,
    requestId: ctx.requestId,
    ...(ctx.traceHeaders && { headers: ctx.traceHeaders }),
  });
  if (result.kind !== "label") return { input, note: result.kind === "failed" ? result.reason : "no_label", used: false };
  const label = `${result.intent}@${result.confidence.toFixed(3)}`;
  if (result.confidence < options.min_confidence) return { input, note: `low_confidence:${label}`, used: false };
  // The label passed the edge layer's own bar (`min_confidence`); the rules take it as given.
  return { input: { ...input, intent: result.intent, intentConfidence: Math.max(result.confidence, policy.intentMinConfidence) }, note: label, used: true };
}

export interface ConsultContext extends Omit<EdgeIntentContext, "messages" | "traceHeaders"> {
  plugins: readonly PolicyPlugin[];
  trace: RequestTrace | undefined;
}

/**
 * The policy's decision for a call that consults it: the edge intent layer first (chat calls;
 * traced as `gearbox.edge_intent`), then the policy with its plugins. A rule that matched on the
 * edge's label says so in its reason (`;edge_intent`). `edgeIntent` is the request log's note.
 */
export async function decideConsulted(
  input: PolicyInput,
  parsed: ParsedCall,
  ctx: ConsultContext,
): Promise<{ decided: PolicyDecision; edgeIntent: string | undefined }> {
  let refined = input;
  let edgeIntent: string | undefined;
  let labelled = false;
  if (parsed.call.endpoint === "chat") {
    const span = ctx.trace?.phase("gearbox.edge_intent", undefined, ctx.trace.current);
    const outcome = await withEdgeIntent(input, { ...ctx, messages: parsed.call.request.messages, ...(span && { traceHeaders: span.headers() }) });
    span?.end(undefined, { "gearbox.edge_intent": outcome.note ?? "not_asked" });
    ({ input: refined, note: edgeIntent, used: labelled } = outcome);
  }
  const decided = ctx.plugins.length > 0 ? await decideWithPlugins(refined, ctx.policy, ctx.plugins) : decidePolicy(refined, ctx.policy);
  return { decided: labelled && decided.layer === "rules" ? { ...decided, reason: `${decided.reason};edge_intent` } : decided, edgeIntent };
}
