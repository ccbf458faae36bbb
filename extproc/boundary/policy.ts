/**
 * The data boundary's policy (`data_boundary:` in the config): for each category of detected
 * value, what happens to a request carrying one —
 *
 *   block      refused (403, code `data_boundary_<category>`), the value never echoed
 *   edge_only  the request stays on the edge: no cloud upgrade, no cloud fallback, ever
 *   redact     each value replaced by a placeholder in everything sent, restored in the answer
 *   allow      nothing
 *
 * Keys are groups (`pii`, `secrets`, `confidential`, `personal`: names and street addresses, `allow`
 * unless named) or single categories (`email`, …; a
 * category's key overrides its group's). `tenants.<id>` and `endpoints.<name>` override the
 * top level (the endpoint's over the tenant's), and add keywords and patterns.
 */
import { z } from "zod";
import { CATEGORIES, DEFAULT_MARKERS, GROUPS, type Category, type CustomRules } from "./detect.ts";

export type Action = "block" | "edge_only" | "redact" | "allow";
const action = z.enum(["block", "edge_only", "redact", "allow"]);

const actions = {
  pii: action.optional(),
  secrets: action.optional(),
  confidential: action.optional(),
  personal: action.optional(),
  ...(Object.fromEntries(CATEGORIES.map((c) => [c, action.optional()])) as Record<Category, z.ZodOptional<typeof action>>),
};

const pattern = z.string().refine(
  (s) => {
    try {
      new RegExp(s, "g");
      return true;
    } catch {
      return false;
    }
  },
  { message: "not a valid regular expression" },
);

const layer = z.strictObject({
  ...actions,
  /** Words that are confidential wherever they appear (project code names): category `keyword`. */
  keywords: z.array(z.string().min(2)).optional(),
  /** Regular expressions (JavaScript syntax), category `keyword`. */
  patterns: z.array(pattern).optional(),
});

export const dataBoundarySchema = z.strictObject({
  /** Off → no detection at all. */
  enable: z.boolean().default(false),
  ...layer.shape,
  /** Markers of a confidential document (category `marker`); absent → the defaults (`CONFIDENTIAL`, `机密`, …). */
  markers: z.array(z.string().min(2)).optional(),
  tenants: z.record(z.string().min(1), layer).default({}),
  endpoints: z.record(z.string().min(1), layer).default({}),
});

export type DataBoundaryConfig = z.infer<typeof dataBoundarySchema>;
type Layer = z.infer<typeof layer>;

/** The defaults when `data_boundary.enable` is on and a category is named nowhere. */
const DEFAULTS: Record<keyof typeof GROUPS, Action> = { secrets: "block", pii: "redact", confidential: "edge_only", personal: "allow" };

/** One request's resolved policy: an action per category and the custom rules. */
export interface BoundaryPolicy {
  actions: Record<Category, Action>;
  rules: CustomRules;
  /** Any category is not `allow`: detection runs. */
  active: boolean;
}

const cache = new WeakMap<DataBoundaryConfig, Map<string, BoundaryPolicy>>();

/** The policy for `tenant` on `endpoint` (memoized per config object). */
export function boundaryPolicy(config: DataBoundaryConfig, tenant: string, endpoint: string): BoundaryPolicy | undefined {
  if (!config.enable) return undefined;
  let byKey = cache.get(config);
  if (!byKey) cache.set(config, (byKey = new Map<string, BoundaryPolicy>()));
  const key = `${tenant}\u0000${endpoint}`;
  let policy = byKey.get(key);
  if (!policy) byKey.set(key, (policy = resolve(config, [config, config.tenants[tenant], config.endpoints[endpoint]])));
  return policy;
}

function resolve(config: DataBoundaryConfig, layers: (Layer | undefined)[]): BoundaryPolicy {
  const actions = {} as Record<Category, Action>;
  for (const [group, members] of Object.entries(GROUPS) as [keyof typeof GROUPS, readonly Category[]][]) {
    for (const c of members) {
      let a: Action = DEFAULTS[group];
      for (const l of layers) a = l?.[c] ?? l?.[group] ?? a;
      // The most specific layer wins; within a layer, the category's key beats its group's.
      actions[c] = a;
    }
  }
  const keywords = layers.flatMap((l) => l?.keywords ?? []);
  const patterns = layers.flatMap((l) => l?.patterns ?? []).map((p) => new RegExp(p, "g"));
  const markers = config.markers ?? DEFAULT_MARKERS;
  const personal = actions.name !== "allow" || actions.address !== "allow";
  const rules = { keywords, patterns, markers: actions.marker === "allow" ? [] : markers, personal };
  return { actions, rules, active: Object.values(actions).some((a) => a !== "allow") };
}
