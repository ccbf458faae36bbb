/** `tenants:` in `gearbox.yaml` (and the admin API's tenant bodies): who may call, what, how much. */
import { z } from "zod";
import { isPrintable, NOT_PRINTABLE_MESSAGE } from "../../common/schemas/printable.ts";
import { isCidr } from "./cidr.ts";

const limitsSchema = z.strictObject({
  requests_per_second: z.number().positive().optional(),
  tokens_per_minute: z.number().int().positive().optional(),
  max_concurrent: z.number().int().positive().optional(),
  daily_cost_usd: z.number().positive().optional(),
});

export const tenantSchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "must be lower-case letters, digits, '-' or '_'"),
  /** Shown by `gearbox tenants list`: printable text only, as are the principals. */
  models: z.array(z.string().min(1).refine(isPrintable, NOT_PRINTABLE_MESSAGE)).min(1).optional(),
  limits: limitsSchema.default({}),
  ip_allowlist: z.array(z.string().refine(isCidr, "must be a CIDR (10.0.0.0/8, 2001:db8::/32) or an IP address")).min(1).optional(),
  principals: z.array(z.string().min(1).refine(isPrintable, NOT_PRINTABLE_MESSAGE)).min(1).optional(),
  degrade_to_edge: z.boolean().default(false),
  alert_at: z.array(z.number().gt(0).lt(1)).optional(),
});
