/**
 * Governance vocabulary shared by authentication, limits and the admin API: tenants (who pays
 * and what they may do), API keys (two tiers: `admin` manages, `call` only calls models) and the
 * limits a tenant or a key carries. Stored records never hold a key itself, only its hash.
 */

/** Limits of a tenant or of one key; absent → unlimited on that dimension. */
export interface Limits {
  /** Requests per second (sliding over one second). */
  requests_per_second?: number;
  /** Input + output tokens per minute; an estimate is reserved before the call, reconciled after. */
  tokens_per_minute?: number;
  /** Requests in flight at once. */
  max_concurrent?: number;
  /** Cloud cost per UTC day, at the provider's list price. */
  daily_cost_usd?: number;
}

export interface Tenant {
  /** Lower-case id; also the Redis hash tag of everything the tenant owns (`{t:<id>}`). */
  id: string;
  /** Client-facing models the tenant may call; absent → any. */
  models?: readonly string[];
  limits: Limits;
  /** Source addresses allowed (CIDRs, IPv4 or IPv6); absent → any. */
  ip_allowlist?: readonly string[];
  /** Workload identities bound to the tenant (the source principal Envoy reports, e.g. `spiffe://cluster.local/ns/shop/sa/web`): such callers need no key. */
  principals?: readonly string[];
  /** Over a cost or token cap, send what the policy allows to the edge instead of refusing (429). */
  degrade_to_edge: boolean;
  /** Cost alert thresholds as fractions of `daily_cost_usd` (a log line and a metric when crossed). */
  alert_at?: readonly number[];
  /** Where the tenant is defined: the config file (read-only over the API) or the admin API. */
  source: "config" | "admin";
}

export type KeyRole = "admin" | "call";

export interface ApiKeyRecord {
  /** Stable id (not secret), e.g. `key_9f2c…`. */
  id: string;
  role: KeyRole;
  /** The call key's tenant; an admin key with a tenant manages only that tenant. */
  tenant?: string;
  name: string;
  /** The visible start of the key (`gbx_call_Ab12`), for lists and logs. */
  prefix: string;
  /** SHA-256 (hex) of the whole key. */
  hash: string;
  /** Per-key limits, on top of the tenant's. */
  limits?: Limits;
  created_at: string;
  created_by: string;
  revoked_at?: string;
}

/** Who a request is, once authenticated. */
export interface Caller {
  tenant: Tenant;
  /** The call key used, absent when the caller was identified by its workload identity. */
  key?: ApiKeyRecord;
  /** How it was identified: `key`, `principal`, or `anonymous` (no tenants configured). */
  via: "key" | "principal" | "anonymous";
}

/** One admin action, for the append-only audit log. */
export interface AuditEntry {
  at: string;
  /** The admin key's id and prefix (never the key). */
  actor: string;
  /** `tenants.put`, `keys.create`, `keys.revoke`, … */
  action: string;
  /** What it acted on (tenant id, key id). */
  target: string;
  /** Source address of the admin request. */
  from: string;
  /** Outcome: `ok` or the error code. */
  result: string;
  details?: Record<string, unknown>;
}
