/** What the admin API needs from the process that runs it. */
import type { AuthDeps } from "../governance/auth.ts";
import type { AuditLog } from "../store/audit-log.ts";
import type { TenantStore } from "../store/tenant-store.ts";
import type { Logger } from "../../common/telemetry/logger.ts";
import type { Route } from "./route.ts";

/** One caller being throttled right now (`GET /v1/limits`, `gearbox limits show`). */
export interface ThrottledCaller {
  tenant: string;
  /** The key id, when the limit is the key's own. */
  key?: string;
  /** The limit being hit: `requests_per_second`, `tokens_per_minute`, `max_concurrent`, `daily_cost_usd`, `runaway`… */
  limit: string;
  /** When it frees up (ISO time), if known. */
  until?: string;
  /** Anything else worth showing (current use against the limit…). */
  detail?: string;
}

export interface AdminDeps {
  store: TenantStore;
  audit: AuditLog;
  /** Shared with `authenticate`, so a change made here is seen at once on this replica. */
  auth: Pick<AuthDeps, "directory" | "keys">;
  /** The bootstrap admin key (`GEARBOX_ADMIN_KEY`), if set: a global admin key outside the store. */
  bootstrapKey?: string;
  /** Who is throttled now (the limiter's view). */
  throttled(): Promise<readonly ThrottledCaller[]>;
  logger: Logger;
  /** Routes of other parts of the process (the devices' `extproc/devices/admin-routes.ts`). */
  routes?: readonly Route[];
  /** Clock (tests). */
  now?: () => Date;
}
