/**
 * Governance for `gearbox serve` / `gearbox extproc`: tenants and keys (memory, or Redis with
 * `REDIS_URL`), authentication, the limits governor (Redis with a per-replica fallback), and the
 * admin API on 8081 when a bootstrap admin key (`GEARBOX_ADMIN_KEY`) is set. A placeholder
 * secret stops the start (exit 1) before anything listens.
 */
import type { GatewayConfig } from "../extproc/config/load.ts";
import { startAdminServer, type AdminServer } from "../extproc/admin/server.ts";
import type { Route } from "../extproc/admin/route.ts";
import { createAuthDeps } from "../extproc/governance/auth.ts";
import { Governor } from "../extproc/governance/governor.ts";
import { ADMIN_KEY_ENV, checkSecrets } from "../extproc/governance/keys.ts";
import type { Governance } from "../extproc/processor/processor.ts";
import type { AuditLog } from "../extproc/store/audit-log.ts";
import { createLimiterStore } from "../extproc/store/create-limiter.ts";
import type { LimiterStats } from "../extproc/store/failover-limiter.ts";
import { MemoryAuditLog } from "../extproc/store/memory-audit-log.ts";
import { MemoryTenantStore } from "../extproc/store/memory-tenant-store.ts";
import { RedisAuditLog } from "../extproc/store/redis-audit-log.ts";
import { connectRedis, redisReady } from "../extproc/store/redis.ts";
import { RedisTenantStore } from "../extproc/store/redis-tenant-store.ts";
import { SharedStateHealth } from "../extproc/store/store-health.ts";
import type { TenantStore } from "../extproc/store/tenant-store.ts";
import type { Logger } from "../common/telemetry/logger.ts";

export interface RunningGovernance {
  governance: Governance;
  admin?: AdminServer;
  /** The shared limiter's failover state (with Redis), for the metrics. */
  limiterStats?: LimiterStats;
  /** Every Redis-backed store's health (tenants, limits; the caches add theirs), for the metrics. */
  sharedState: SharedStateHealth;
  /** One line for the startup report. */
  describe: string[];
  close(): Promise<void>;
}

/** What the tenant store's transitions mean, for their log lines. */
const TENANTS_MEANING = {
  degraded: "keys and tenants are served from this replica's last good values; keys it never saw answer 503",
  healthy: "keys and tenants are read from it again",
};

export class SecretError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join("; "));
  }
}

/** The startup report's auth line: whether keys are required, and why, in the config's own terms. */
export function authLine(config: Pick<GatewayConfig, "auth" | "tenants">, required: boolean): string {
  const tenants = `${config.tenants.length} tenant(s) in the config`;
  if (required) return `  auth            call key or bound workload identity required; ${tenants}`;
  const anonymous = `callers without a key are tenant '${config.auth.anonymous_tenant}'`;
  // Not required either because the operator said so, or because nothing asks for it (no tenants, no admin key).
  const why = config.auth.required === false ? "auth.required: false" : "no tenants configured";
  return `  auth            keys optional (${why}): ${anonymous}; ${tenants}`;
}

export async function startGovernance(
  config: GatewayConfig,
  logger: Logger,
  env: NodeJS.ProcessEnv = process.env,
  adminRoutes: readonly Route[] = [],
): Promise<RunningGovernance> {
  const secrets = checkSecrets(env);
  if (!secrets.ok) throw new SecretError(secrets.errors);
  const redisUrl = env.REDIS_URL || undefined;
  const redis = redisUrl ? connectRedis(redisUrl, { logger, name: "gearbox-tenants", commandTimeoutMs: 500 }) : undefined;
  if (redis)
    await redisReady(redis, 3_000).catch((err: unknown) =>
      logger.warn({ err: (err as Error).message }, "Redis not ready yet: key lookups answer 503 until it is"),
    );
  const store: TenantStore = redis ? new RedisTenantStore(redis) : new MemoryTenantStore();
  const audit: AuditLog = redis ? new RedisAuditLog(redis) : new MemoryAuditLog();
  const staleness = config.shared_state;
  const sharedState = new SharedStateHealth(logger, { probeEveryMs: staleness.probe_interval_ms });
  const health = sharedState.store("tenants", TENANTS_MEANING);
  const auth = createAuthDeps(config, store, env, {
    shared: { health, refreshMs: staleness.refresh_ms, readTimeoutMs: staleness.read_timeout_ms, maxStaleMs: staleness.max_stale_ms },
  });
  const limiter = createLimiterStore({ ...(redisUrl !== undefined && { redisUrl }), logger, sharedState, probeEveryMs: staleness.probe_interval_ms });
  const governor = new Governor({ store: limiter.store, runaway: config.runaway, logger });
  const bootstrapKey = env[ADMIN_KEY_ENV];
  let admin: AdminServer | undefined;
  if (bootstrapKey) {
    const throttled = async () => {
      const tenants = new Set([...config.tenants.map((t) => t.id), ...(await store.listTenants()).map((t) => t.id), config.auth.anonymous_tenant]);
      const limits = await governor.throttled([...tenants]);
      return limits.map((l) => ({
        tenant: l.tenant,
        ...(l.key !== undefined && { key: l.key }),
        limit: l.limit,
        detail: `${l.denials} refused in the last two minutes`,
      }));
    };
    admin = await startAdminServer({ store, audit, auth, bootstrapKey, throttled, logger, routes: adminRoutes }, config.listen.admin_port, config.listen.host);
  }
  const where = redisUrl ? `Redis (${new URL(redisUrl).host}), per-replica fallback if it fails` : "in memory";
  return {
    governance: { auth, governor },
    ...(admin && { admin }),
    ...(limiter.stats && { limiterStats: limiter.stats }),
    sharedState,
    describe: [
      authLine(config, auth.required),
      `  limits          ${where}; runaway: ${config.runaway.enable ? `over ${config.runaway.max_identical} identical requests of one ${config.runaway.key} per ${config.runaway.window_ms} ms ${config.runaway.replay ? "answered with the last answer" : "refused"}` : "off"}`,
      ...(redisUrl
        ? [
            `  shared state    if Redis fails: last good keys and tenants for up to ${staleness.max_stale_ms / 1000} s, local limits, cache misses (reads wait ${staleness.read_timeout_ms} ms at most)`,
          ]
        : []),
      admin
        ? `  admin API       http://${config.listen.host}:${admin.port}  (tenants, keys, limits, audit)`
        : `  admin API       off (set ${ADMIN_KEY_ENV} to a strong secret to enable it)`,
    ],
    close: async () => {
      await admin?.close();
      governor.close();
      limiter.close();
      redis?.disconnect();
    },
  };
}
