/**
 * A provider's timeouts as every call Gearbox makes to it uses them (front door, fallbacks, cascade
 * upgrades): connection set-up, first byte (status and headers), the idle gap between body chunks,
 * and the whole call. Through Envoy the primary call's timeouts are Envoy's (cluster
 * `connect_timeout`, route `timeout`, `idle_timeout`).
 */
import { GatewayError } from "../../common/errors.ts";
import type { Provider } from "../providers/provider.ts";

export interface ProviderTimeouts {
  connectMs: number;
  firstByteMs: number;
  idleMs: number;
  totalMs: number;
}

/** The provider's timeouts; a provider built without them (tests) has only its total. */
export function timeoutsOf(provider: Pick<Provider, "timeoutMs" | "timeouts">): ProviderTimeouts {
  return (
    provider.timeouts ?? {
      connectMs: Math.min(5_000, provider.timeoutMs),
      firstByteMs: provider.timeoutMs,
      idleMs: provider.timeoutMs,
      totalMs: provider.timeoutMs,
    }
  );
}

/** Which timeout fired. */
export type TimeoutKind = "connect" | "first_byte" | "idle" | "total";

/** The error a fired timeout is (504 `upstream_timeout`; its cause in the message, never a key or a prompt). */
export function upstreamTimeout(provider: string, kind: TimeoutKind, ms: number): GatewayError {
  const what = { connect: "could not connect", first_byte: "sent no answer", idle: "sent nothing more", total: "did not finish" }[kind];
  return new GatewayError(504, "timeout_error", `Upstream '${provider}' ${what} within ${ms} ms.`, { code: "upstream_timeout" });
}
