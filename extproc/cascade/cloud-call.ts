/**
 * Gearbox calling a cloud provider itself, for a cascade upgrade: the edge answered weakly (or
 * not at all) and the same canonical request now goes to the cloud, through the translator for
 * that provider. Pooled keep-alive connections, the provider's timeouts (connect, first byte,
 * idle, total), retries with its breaker and retry budget (`resilience/retrying.ts`), and the
 * caller's abort.
 */
import { GatewayError } from "../../common/errors.ts";
import { authHeaders, type Provider } from "../providers/provider.ts";
import type { RetryConfig } from "../resilience/config-schema.ts";
import { callProvider, type RawAnswer } from "../resilience/provider-call.ts";
import type { ProviderHealth } from "../resilience/provider-health.ts";
import { withRetries } from "../resilience/retrying.ts";
import type { CallPlan } from "../translators/compose.ts";
import type { TranslatedResponse } from "../translators/translator.ts";

export interface CloudAnswer extends TranslatedResponse {
  /** The status the client gets. */
  status: number;
  /** The answer's bytes in the client's schema. */
  bytes: Buffer;
  latencyMs: number;
  /** Calls made to the provider (retries included). */
  attempts: number;
}

/** Retries of the call: the providers' health and the retry settings. */
export interface CloudRetries {
  health: ProviderHealth;
  retry: RetryConfig;
}

/** `traceHeaders`: the upgrade span's `traceparent` (+ `tracestate`), when the request is traced. */
export async function callCloud(
  provider: Provider,
  plan: CallPlan,
  clientBody: Buffer,
  signal?: AbortSignal,
  traceHeaders?: Record<string, string>,
  retries?: CloudRetries,
): Promise<CloudAnswer> {
  const started = performance.now();
  const url = new URL(provider.basePath + plan.upstream.path, provider.baseUrl.origin);
  const headers = { ...plan.upstream.headers, ...authHeaders(provider), "accept-encoding": "identity", ...traceHeaders };
  const body = plan.upstream.body ?? clientBody;
  const attempt = async () => {
    const raw = await callProvider(provider, url, headers, body, signal);
    return { status: raw.status, headers: raw.headers, value: raw };
  };
  try {
    let raw: RawAnswer;
    let attempts = 1;
    if (retries) {
      const result = await withRetries<RawAnswer>({
        provider: provider.name,
        health: retries.health,
        retry: retries.retry,
        gated: false,
        attempt,
        ...(signal && { signal }),
      });
      if (result.kind !== "answer") throw result.kind === "error" ? result.error : new Error("a first attempt that is not gated is never refused");
      raw = result.value;
      attempts = result.attempts;
    } else raw = (await attempt()).value;
    const translated = plan.response(raw.status, raw.headers, raw.body);
    return { ...translated, status: translated.status ?? raw.status, bytes: translated.body ?? raw.body, latencyMs: performance.now() - started, attempts };
  } catch (err) {
    if (err instanceof GatewayError && err.code === "upstream_timeout")
      throw new GatewayError(504, "timeout_error", `Cloud upgrade to '${provider.name}' timed out.`, { code: "upstream_timeout", cause: err });
    if (signal?.aborted) throw err;
    throw new GatewayError(502, "upstream_error", `Cloud upgrade to '${provider.name}' failed: ${(err as Error).message}`, {
      code: "upstream_unreachable",
      cause: err,
    });
  }
}
