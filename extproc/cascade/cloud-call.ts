/**
 * Gearbox calling a cloud provider itself, for a cascade upgrade: the edge answered weakly (or
 * not at all) and the same canonical request now goes to the cloud, through the translator for
 * that provider. Pooled keep-alive connections, a timeout, and the caller's abort.
 */
import { GatewayError } from "../errors.ts";
import { readAll, sendUpstream } from "../http/upstream-client.ts";
import { authHeaders, type Provider } from "../providers/provider.ts";
import type { CallPlan } from "../translators/compose.ts";
import type { TranslatedResponse } from "../translators/translator.ts";

export interface CloudAnswer extends TranslatedResponse {
  /** The status the client gets. */
  status: number;
  /** The answer's bytes in the client's schema. */
  bytes: Buffer;
  latencyMs: number;
}

/** `traceHeaders`: the upgrade span's `traceparent` (+ `tracestate`), when the request is traced. */
export async function callCloud(provider: Provider, plan: CallPlan, clientBody: Buffer, signal?: AbortSignal, traceHeaders?: Record<string, string>): Promise<CloudAnswer> {
  const started = performance.now();
  const url = new URL(provider.basePath + plan.upstream.path, provider.baseUrl.origin);
  const headers = { ...plan.upstream.headers, ...authHeaders(provider), "accept-encoding": "identity", ...traceHeaders };
  const timeout = AbortSignal.timeout(provider.timeoutMs);
  const combined = signal ? anySignal(signal, timeout) : timeout;
  try {
    const res = await sendUpstream(url, headers, plan.upstream.body ?? clientBody, combined);
    const body = await readAll(res);
    const status = res.statusCode ?? 502;
    const plain: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") plain[k] = v;
    const translated = plan.response(status, plain, body);
    return { ...translated, status: translated.status ?? status, bytes: translated.body ?? body, latencyMs: performance.now() - started };
  } catch (err) {
    if (timeout.aborted) throw new GatewayError(504, "timeout_error", `Cloud upgrade to '${provider.name}' timed out.`, { code: "upstream_timeout", cause: err });
    throw new GatewayError(502, "upstream_error", `Cloud upgrade to '${provider.name}' failed: ${(err as Error).message}`, { code: "upstream_unreachable", cause: err });
  }
}

function anySignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  const controller = new AbortController();
  const abort = () => controller.abort();
  a.addEventListener("abort", abort, { once: true });
  b.addEventListener("abort", abort, { once: true });
  return controller.signal;
}
