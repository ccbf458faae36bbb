/**
 * The routing policy's input for a chat request: intent and complexity (pure, no I/O) and the
 * live signals — the conversation's last target, the cloud's recent latency, the budget spent.
 */
import type { ChatRequest } from "../../common/canonical/types.ts";
import type { GatewayConfig } from "../config/load.ts";
import { estimateComplexity } from "../routing/complexity.ts";
import { classifyIntent } from "../routing/intent/classify.ts";
import type { PolicyInput } from "../routing/policy/index.ts";
import type { CloudSpend } from "../routing/signals.ts";
import type { Headers } from "./outcome.ts";
import { policyFor, signalsFor } from "./config-state.ts";

export function policyInputFor(req: ChatRequest, clientRoute: "auto" | "edge" | "cloud", config: GatewayConfig, headers: Headers, cloudSpend: CloudSpend): PolicyInput {
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
    ...liveSignals(config, headers, cloudSpend),
  };
}

function liveSignals(config: GatewayConfig, headers: Headers, cloudSpend: CloudSpend): Pick<PolicyInput, "stickyTarget" | "cloudLatencyP50Ms" | "budget"> {
  const signals = signalsFor(config);
  const sticky = signals.sticky.get(headers["x-gearbox-conversation-id"]);
  const latency = signals.cloudLatency.p50();
  const budget = policyFor(config).dynamic.monthlyCloudBudgetUsd;
  return {
    ...(sticky && { stickyTarget: sticky }),
    ...(latency !== undefined && { cloudLatencyP50Ms: latency }),
    ...(budget !== undefined && { budget: { cloudSpentFraction: cloudSpend.fraction(budget) } }),
  };
}
