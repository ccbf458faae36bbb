/**
 * Runaway protection: a client stuck in a retry loop sends the same request again and again.
 * More than `runaway.max_identical` identical requests of one tenant within `runaway.window_ms`
 * (a window started by the first of them) are refused with 429 `runaway_request_loop` before
 * any upstream call, so the loop costs nothing. "Identical" is the fingerprint of the tenant and
 * the canonical request: the caller passes the parsed request serialized again (e.g.
 * `JSON.stringify` of the parsed body), so formatting differences of the client's JSON vanish.
 *
 * The count is one limiter `repeat` check (INCR + PEXPIRE in the same script), part of the same
 * atomic admission as the other limits; a refused request does not extend the window.
 */
import { createHash } from "node:crypto";
import type { RawConfig } from "../config/schema.ts";
import type { PlannedCheck } from "./limits.ts";

export type RunawayConfig = RawConfig["runaway"];

/** 128 bits of SHA-256 over the tenant id and the canonical request. */
export function requestFingerprint(tenantId: string, canonicalRequest: string | Uint8Array): string {
  return createHash("sha256").update(tenantId).update("\n").update(canonicalRequest).digest("hex").slice(0, 32);
}

/** The runaway check for a request's fingerprint, or undefined when runaway protection is off. */
export function runawayCheck(config: RunawayConfig, fingerprint: string | undefined): PlannedCheck | undefined {
  if (!config.enable || fingerprint === undefined) return undefined;
  return {
    check: { kind: "repeat", key: `fp:${fingerprint}`, limit: config.max_identical, windowMs: config.window_ms, label: "tenant/runaway" },
    limit: "runaway",
    configured: config.max_identical,
  };
}
