/**
 * One call Gearbox makes to a provider itself (a fallback, a cascade upgrade), under the
 * provider's four timeouts: connect, first byte, idle gap between chunks, and the whole call.
 * The answer is read completely (a stream too: nothing of it has reached the client yet).
 */
import { sendUpstream } from "../http/upstream-client.ts";
import type { Headers } from "../processor/outcome.ts";
import type { Provider } from "../providers/provider.ts";
import { idleGuarded } from "./idle-guard.ts";
import { timeoutsOf, upstreamTimeout } from "./timeouts.ts";

export interface RawAnswer {
  status: number;
  headers: Headers;
  body: Buffer;
}

/** `signal`: the caller's abort (the client left). Throws the 504 `upstream_timeout` of a deadline, or the connection's error. */
export async function callProvider(provider: Provider, url: URL, headers: Headers, body: Buffer, signal?: AbortSignal): Promise<RawAnswer> {
  const t = timeoutsOf(provider);
  const total = new AbortController();
  const timer = setTimeout(() => total.abort(upstreamTimeout(provider.name, "total", t.totalMs)), t.totalMs);
  const onAbort = () => total.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const res = await sendUpstream(url, headers, body, total.signal, {
      connectMs: t.connectMs,
      firstByteMs: t.firstByteMs,
      timeout: (kind) => upstreamTimeout(provider.name, kind, kind === "connect" ? t.connectMs : t.firstByteMs),
    });
    const chunks: Buffer[] = [];
    for await (const chunk of idleGuarded(res, t.idleMs, () => upstreamTimeout(provider.name, "idle", t.idleMs))) chunks.push(chunk);
    const plain: Headers = {};
    for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) plain[k] = Array.isArray(v) ? v.join(", ") : v;
    return { status: res.statusCode ?? 502, headers: plain, body: Buffer.concat(chunks) };
  } catch (err) {
    // The total deadline aborts the request: its error is the deadline's, not the abort's.
    if (total.signal.aborted && !signal?.aborted) throw total.signal.reason;
    throw err;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}
