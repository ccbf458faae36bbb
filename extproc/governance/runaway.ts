/**
 * Runaway protection: a client stuck in a retry loop sends the same request again and again.
 * More than `runaway.max_identical` identical requests of one caller within `runaway.window_ms`
 * (a window started by the first of them) are not sent upstream: they are answered from the
 * answer just given to that caller (`runaway-replay.ts`, `runaway.replay`), or refused with 429
 * `runaway_request_loop` when there is none to give, so the loop costs nothing either way.
 *
 * "Identical" is the fingerprint of the tenant, the caller within it, the endpoint, the model,
 * whether it streams, and the request's body as Gearbox forwards it: the bytes the client sent,
 * or Gearbox's rewrite of them (a conversation's history, masked values). A client stuck in a
 * loop sends the same bytes every time; the body is not serialized again for the count (that
 * cost every admitted request a `JSON.stringify`), so two bodies that differ only in their JSON's
 * whitespace or escapes count apart. The caller (`runaway.key: caller`, the default) is the call key's id when a key
 * was used, else the workload identity (SPIFFE principal), else the source address; identical
 * requests of different callers never count together (many users of one app may send its one
 * fixed prompt). `runaway.key: tenant` counts the whole tenant together, as before.
 *
 * The count is one limiter `repeat` check (INCR + PEXPIRE in the same script), part of the same
 * atomic admission as the other limits; a refused request does not extend the window.
 */
import { createHash, hash } from "node:crypto";
import type { RawConfig } from "../config/schema.ts";
import type { PlannedCheck } from "./limits.ts";
import type { Caller } from "./model.ts";

/**
 * `runaway:` of the config. `key` and `replay*` may be absent (hand-built configs in tests and
 * benches): absent means the schema's default.
 */
export type RunawayConfig = Pick<RawConfig["runaway"], "enable" | "window_ms" | "max_identical"> &
  Partial<Omit<RawConfig["runaway"], "enable" | "window_ms" | "max_identical">>;

/**
 * 128 bits of SHA-256 over a scope (`runawayScope`, or a tenant id), a newline and a request
 * body: its bytes as they are, or a text's UTF-8 (so a text and its bytes hash alike). A short
 * body is hashed in one call with the scope in front (one small copy); a long one is fed to a hash
 * after the scope, not copied — the same bytes either way, so the same fingerprint. Against the
 * body read as Latin-1 text into a one-shot hash, as before: about the same for a short body,
 * 27 → 17 µs for 20 KB (bench/cpu/cold-pieces.ts).
 */
export function requestFingerprint(scope: string, request: string | Buffer): string {
  const body = typeof request === "string" ? Buffer.from(request) : request;
  const head = Buffer.from(`${scope}\n`);
  const digest =
    body.length <= ONE_SHOT_MAX_BYTES ? hash("sha256", Buffer.concat([head, body]), "hex") : createHash("sha256").update(head).update(body).digest("hex");
  return digest.slice(0, 32);
}

/** Up to here a copy of the body costs less than a `Hash` object (and comes from Node's buffer pool). */
const ONE_SHOT_MAX_BYTES = 4096;

/** Who is calling, as the transport knows it (the processor's `ClientIdentity`). */
export interface TransportIdentity {
  address?: string;
  principal?: string;
}

/** The caller a runaway count belongs to: its scope (part of the fingerprint) and how messages name it. */
export interface RunawayScope {
  /** `tenant` alone, or `tenant` + `k:<key id>` / `p:<principal>` / `a:<address>`. */
  scope: string;
  /** For messages: `tenant 'shop'`, `key 'key_1' of tenant 'shop'`, `caller 10.0.0.7 of tenant 'shop'`. */
  who: string;
}

/**
 * The caller of a request within its tenant: the key's id, else the workload identity, else the
 * source address; the tenant when the transport knows none of them, or when `by` is `tenant`
 * (`runaway.key`, the count's scope; replays are always keyed by the caller).
 */
export function runawayScope(by: "caller" | "tenant", caller: Caller, client: TransportIdentity): RunawayScope {
  const tenant = caller.tenant.id;
  const wholeTenant = { scope: tenant, who: `tenant '${tenant}'` };
  if (by === "tenant") return wholeTenant;
  const of = `of tenant '${tenant}'`;
  if (caller.key) return { scope: `${tenant}\nk:${caller.key.id}`, who: `key '${caller.key.id}' (${caller.key.prefix}…) ${of}` };
  if (client.principal !== undefined) return { scope: `${tenant}\np:${client.principal}`, who: `caller ${client.principal} ${of}` };
  if (client.address !== undefined) return { scope: `${tenant}\na:${client.address}`, who: `caller ${client.address} ${of}` };
  return wholeTenant;
}

/** What makes two requests identical besides their body: endpoint, model (Gemini's is in the path) and streaming. */
export interface RequestShape {
  endpoint: string;
  model: string;
  stream: boolean;
}

/** The fingerprint of one caller's request (`runawayScope`), its shape and its body. */
export function callerFingerprint(scope: RunawayScope, shape: RequestShape, body: string | Buffer): string {
  return requestFingerprint(`${scope.scope}\n${shape.endpoint}\n${shape.model}\n${shape.stream ? "stream" : "whole"}`, body);
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
