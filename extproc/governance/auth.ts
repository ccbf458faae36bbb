/**
 * Who is calling a model: a Gearbox call key (`authorization: Bearer`, `x-api-key` or `api-key`,
 * the headers the OpenAI, Anthropic and Azure SDKs send), or a workload identity bound to a tenant
 * (the source principal Envoy reports: no key needed), or, when keys are not required, the
 * anonymous tenant. Then the tenant's IP allowlist. `checkModel` applies its model allowlist once
 * the model is known.
 *
 * Key lookups go through `KeyCache` and tenants through `TenantDirectory`: at most one store read
 * per key per 5 s, and a revoked key stops working within 5 s on every replica. While the store
 * fails, both answer from their last good values (for at most `maxStaleMs`); only what they never
 * read (a key not seen before, a tenant stored but never listed) fails closed, with 503.
 */
import { GatewayError } from "../../common/errors.ts";
import { fail, ok, type Result } from "../../common/result.ts";
import type { RawConfig } from "../config/schema.ts";
import type { TenantStore } from "../store/tenant-store.ts";
import { invalidApiKey, ipNotAllowed, missingApiKey } from "./auth-errors.ts";
import { addressAllowed } from "./cidr.ts";
import { TenantDirectory, type DirectoryOptions, type TenantSnapshot } from "./directory.ts";
import { KeyCache, type KeyCacheOptions } from "./key-cache.ts";
import { ADMIN_KEY_ENV, hashKey, isGearboxKey, verifyKey } from "./keys.ts";
import type { StoreHealth } from "../store/store-health.ts";
import type { ApiKeyRecord, Caller, Tenant } from "./model.ts";
import { andThen, isPending, type Step } from "../../common/step.ts";

export interface AuthDeps {
  directory: TenantDirectory;
  keys: KeyCache;
  /** Every call needs a call key or a bound workload identity. */
  required: boolean;
  /** The tenant of unauthenticated callers when keys are not required. */
  anonymousTenant: string;
}

export interface AuthRequest {
  /** Request headers, names in lower case (as Envoy and Node give them). */
  headers: Record<string, string>;
  /** The caller's address (Envoy's `source.address` attribute; the socket's peer at the front door). */
  sourceAddress?: string;
  /** The caller's workload identity as Envoy verified it (`connection.uri_san_peer_certificate`, or, with `extproc.trust_xfcc`, the XFCC `URI`: `xfcc.ts`). */
  sourcePrincipal?: string;
}

type GovernanceConfig = Pick<RawConfig, "tenants" | "auth">;

/** `auth.required` as configured, else on when tenants or a bootstrap admin key exist, off on embedded defaults. */
export function authRequired(config: GovernanceConfig, env: NodeJS.ProcessEnv): boolean {
  return config.auth.required ?? (config.tenants.length > 0 || env[ADMIN_KEY_ENV] !== undefined);
}

/** How the directory and the key cache ride out a failing store (one health for both: one store). */
export interface SharedStateOptions {
  health?: StoreHealth;
  /** Freshness of key lookups and of the tenant listing (`ttlMs` of both); default 5 s. */
  refreshMs?: number;
  readTimeoutMs?: number;
  maxStaleMs?: number;
}

/** The deps of `authenticate` for a config and a store; share `directory` and `keys` with the admin API. */
export function createAuthDeps(
  config: GovernanceConfig,
  store: TenantStore,
  env: NodeJS.ProcessEnv,
  options: { directory?: DirectoryOptions; keys?: KeyCacheOptions; shared?: SharedStateOptions } = {},
): AuthDeps {
  const { refreshMs, ...shared } = options.shared ?? {};
  const fresh = refreshMs === undefined ? {} : { ttlMs: refreshMs };
  return {
    directory: new TenantDirectory(config.tenants, store, { ...shared, ...fresh, ...options.directory }),
    keys: new KeyCache(store, { ...shared, ...fresh, ...options.keys }),
    required: authRequired(config, env),
    anonymousTenant: config.auth.anonymous_tenant,
  };
}

/**
 * The key a client presented, where its SDK sends one: `authorization: Bearer …` (OpenAI),
 * `x-api-key` (Anthropic), `api-key` (Azure), `x-goog-api-key` (Google's). None of them is ever
 * forwarded (`CLIENT_CREDENTIAL_HEADERS`).
 */
export function presentedKey(headers: Record<string, string>): string | undefined {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? "")?.[1];
  const key = bearer ?? headers["x-api-key"] ?? headers["api-key"] ?? headers["x-goog-api-key"];
  return key?.trim() || undefined;
}

/**
 * Google's REST convention puts the API key in the query (`?key=…`): never forwarded (a provider
 * would get the caller's key), and read as the call key when no header carries one. Answers the
 * query without it (`""` when nothing else is left).
 */
export function takeQueryKey(query: string, headers: Record<string, string>): string {
  if (!query.includes("key=")) return query;
  const params = new URLSearchParams(query);
  const key = params.get("key");
  if (key === null) return query;
  params.delete("key");
  if (presentedKey(headers) === undefined && key.trim() !== "") headers["x-goog-api-key"] = key;
  const rest = params.toString();
  return rest === "" ? "" : `?${rest}`;
}

/**
 * Authenticates a model call. Store failures fail closed (503). Answers at once (no promise)
 * when the key and the tenants it needs are held fresh — every call but the first per key and
 * refresh interval — so the hot path waits no turn of the event loop.
 */
export function authenticate(request: AuthRequest, deps: AuthDeps): Step<Result<Caller, GatewayError>> {
  let caller: Step<Result<Caller, GatewayError>>;
  try {
    caller = identify(request, deps);
  } catch (err) {
    return unavailable(err);
  }
  return isPending(caller) ? caller.then((c) => allowedFrom(c, request), unavailable) : allowedFrom(caller, request);
}

function unavailable(err: unknown): Result<Caller, GatewayError> {
  return fail(new GatewayError(503, "server_error", "Authentication is temporarily unavailable; retry shortly.", { code: "auth_unavailable", cause: err }));
}

/** The tenant's IP allowlist, once the caller is known. */
function allowedFrom(caller: Result<Caller, GatewayError>, request: AuthRequest): Result<Caller, GatewayError> {
  if (!caller.ok) return caller;
  const allowlist = caller.value.tenant.ip_allowlist;
  if (allowlist && (request.sourceAddress === undefined || !addressAllowed(allowlist, request.sourceAddress))) {
    return fail(ipNotAllowed());
  }
  return caller;
}

function identify(request: AuthRequest, deps: AuthDeps): Step<Result<Caller, GatewayError>> {
  const key = presentedKey(request.headers);
  // Without required keys, a non-Gearbox token (a provider key an app still sends) is not a claim.
  if (key !== undefined && (deps.required || isGearboxKey(key))) return andThen(deps.keys.lookup(hashKey(key)), (record) => byKey(key, record, deps));
  if (deps.required && request.sourcePrincipal === undefined) return fail(missingApiKey("call"));
  return andThen(deps.directory.snapshot(), (tenants) => byIdentity(request, deps, tenants));
}

/** The caller of a presented key, by its record (`undefined`: no such key). */
function byKey(key: string, record: ApiKeyRecord | undefined, deps: AuthDeps): Step<Result<Caller, GatewayError>> {
  if (!record || record.revoked_at !== undefined || !verifyKey(key, record)) return fail(invalidApiKey());
  if (record.role !== "call") {
    return fail(new GatewayError(403, "permission_error", "Admin keys cannot make model calls; use a call key.", { code: "admin_key_not_allowed" }));
  }
  const tenantId = record.tenant;
  if (tenantId === undefined) return fail(invalidApiKey());
  return andThen(deps.directory.snapshot(), (tenants): Result<Caller, GatewayError> => {
    const tenant = tenants.byId.get(tenantId);
    if (!tenant) return tenants.partial ? unknowable() : fail(invalidApiKey());
    return ok({ tenant, key: record, via: "key" });
  });
}

/** The caller without a key: its bound workload identity, else (keys not required) the anonymous tenant. */
function byIdentity(request: AuthRequest, deps: AuthDeps, tenants: TenantSnapshot): Result<Caller, GatewayError> {
  if (request.sourcePrincipal !== undefined) {
    const tenant = tenants.byPrincipal.get(request.sourcePrincipal);
    if (tenant) return ok({ tenant, via: "principal" });
    // A stored tenant may bind this identity: without the store, a key is not "missing".
    if (tenants.partial && deps.required) return unknowable();
  }
  if (deps.required) return fail(missingApiKey("call"));
  // Keys not required: the anonymous tenant (looked up in the config alone while the store was never read).
  const tenant = tenants.byId.get(deps.anonymousTenant) ?? anonymous(deps.anonymousTenant);
  return ok({ tenant, via: "anonymous" });
}

/** The store is needed to answer and there is no last good value: `authenticate` answers 503. */
function unknowable(): never {
  throw new Error("the tenant store is unreachable and this replica has not read the tenants yet");
}

/** The anonymous tenant when no tenant of that id is defined: unlimited. */
function anonymous(id: string): Tenant {
  return { id, limits: {}, degrade_to_edge: false, source: "config" };
}

/** The tenant's model allowlist (absent → any model). */
export function checkModel(caller: Caller, model: string): Result<void, GatewayError> {
  const allowed = caller.tenant.models;
  if (allowed === undefined || allowed.includes(model)) return ok(undefined);
  return fail(new GatewayError(403, "permission_error", `The model '${model}' is not allowed for this caller.`, { code: "model_not_allowed", param: "model" }));
}
