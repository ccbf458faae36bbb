/**
 * The routing policy's input for a chat request: intent and complexity (pure, no I/O) and the
 * live signals — the conversation's last target, the cloud's recent latency, the budget spent.
 */
import type { ChatRequest } from "../../common/canonical/types.ts";
import type { GatewayConfig } from "../config/load.ts";
import { estimateComplexity } from "../routing/complexity.ts";
import { classifyIntent } from "../routing/intent/classify.ts";
import type { PolicyInput } from "../routing/policy/index.ts";
import type { Headers } from "./outcome.ts";
import { policyFor } from "./config-state.ts";
import type { RuntimeState } from "./runtime-state.ts";

export function policyInputFor(
  req: ChatRequest,
  clientRoute: "auto" | "edge" | "cloud",
  config: GatewayConfig,
  headers: Headers,
  runtime: RuntimeState,
): PolicyInput {
  const policy = policyFor(config);
  const intent = classifyIntent(req.messages, policy.allowClientIntent ? headers["x-gearbox-intent"] : undefined);
  return {
    intent: intent.intent,
    intentConfidence: intent.confidence,
    complexity: estimateComplexity(req.messages),
    hasTools: (req.tools?.length ?? 0) > 0,
    clientRoute,
    model: req.model,
    edgeAvailable: true,
    ...liveSignals(config, headers, runtime),
  };
}

function liveSignals(config: GatewayConfig, headers: Headers, runtime: RuntimeState): Pick<PolicyInput, "stickyTarget" | "cloudLatencyP50Ms" | "budget"> {
  const sticky = runtime.sticky.get(headers["x-gearbox-conversation-id"]);
  const latency = runtime.cloudLatency.p50();
  const budget = policyFor(config).dynamic.monthlyCloudBudgetUsd;
  return {
    ...(sticky && { stickyTarget: sticky }),
    ...(latency !== undefined && { cloudLatencyP50Ms: latency }),
    ...(budget !== undefined && { budget: { cloudSpentFraction: runtime.cloudSpend.fraction(budget) } }),
  };
}
