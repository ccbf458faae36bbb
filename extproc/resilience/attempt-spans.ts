/**
 * The trace of a call the front door retries: the failed attempt's CLIENT span ends with its
 * cause and the next attempt gets its own, so a trace shows one span per attempt.
 */
import type { Provider } from "../providers/provider.ts";
import type { RequestTrace } from "../telemetry/request-trace.ts";
import { GEARBOX, GEN_AI, genAiProviderName, HTTP } from "../../common/telemetry/tracing-attributes.ts";

export function traceRetry(
  trace: RequestTrace | undefined,
  cause: string,
  attempt: number,
  operation: string,
  call: { provider: Provider; upstreamModel: string },
): void {
  const failed = trace?.upstream;
  if (!trace || !failed) return;
  failed.end({ message: `attempt ${attempt} failed: ${cause}` }, { [GEARBOX.attempt]: attempt });
  trace.upstream = trace.call(`${operation} ${call.upstreamModel}`, {
    [GEN_AI.operationName]: operation,
    [GEN_AI.requestModel]: call.upstreamModel,
    [GEN_AI.providerName]: genAiProviderName(call.provider.kind, call.provider.name),
    [HTTP.serverAddress]: call.provider.baseUrl.hostname,
    [GEARBOX.upstream]: "cloud",
    [GEARBOX.attempt]: attempt + 1,
    [GEARBOX.fallbackCause]: `${call.provider.name}:${cause}`,
  });
}
