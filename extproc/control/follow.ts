/**
 * An ext_proc replica following the control plane: the routing policy (`gearbox.v1.RoutingPolicy`
 * `default`) and the live edge agents (the `gearbox-edge` ClusterLoadAssignment) arrive over ADS
 * and are applied without dropping a request.
 *
 * - Policy: validated with the config file's own schema; plugins named by it are loaded first.
 *   Valid → the runtime swaps in a new snapshot of the config with the new `route:` (requests
 *   already running keep the snapshot they started with; stickiness, the latency window and the
 *   spend carry over); invalid → NACK naming the field, the last good policy stays.
 * - Edge agents: replace the live set the processor picks from.
 */
import path from "node:path";
import { routeSchema } from "../config/schema.ts";
import type { LiveEdgeAgents } from "../edge/agents.ts";
import type { Runtime } from "../runtime/runtime.ts";
import { loadPlugins } from "../routing/policy/index.ts";
import type { Logger } from "../../common/telemetry/logger.ts";
import { startAdsClient, type AdsClient } from "../../xds/client/ads-client.ts";
import { TYPE_URLS, type AnyMessage } from "../../common/control-plane/protos.ts";
import { decodeEdgeEndpoints } from "../../xds/resources/envoy.ts";
import { decodeRoutingPolicy } from "../../xds/resources/gearbox.ts";

/** What following changes: the runtime's snapshot (a pushed policy) and the live edge set (the runtime's directory). */
export interface Followed {
  runtime: Runtime;
  edgeAgents: LiveEdgeAgents;
}

export const POLICY_NAME = "default";
export const EDGE_CLUSTER = "gearbox-edge";
/** The node group ext_proc replicas subscribe as (`node.cluster`). */
export const EXTPROC_NODE_GROUP = "gearbox-extproc";

export interface FollowOptions {
  address: string;
  nodeId: string;
  /** The Kubernetes node this replica runs on, for the control plane's logs. */
  nodeName?: string;
  followed: Followed;
  logger: Logger;
  backoff?: { initialMs: number; maxMs: number };
}

/** Validates and applies a pushed `route:` section; returns the NACK message when it is refused. */
export async function applyRoutingPolicy(runtime: Runtime, route: unknown): Promise<string | undefined> {
  const parsed = routeSchema.safeParse(route);
  if (!parsed.success) return parsed.error.issues.map((i) => `route.${i.path.join(".")}: ${i.message}`).join("; ");
  const next = parsed.data;
  const { config, plugins: current } = runtime.current();
  let plugins = current;
  if (JSON.stringify(next.plugins) !== JSON.stringify(config.route.plugins)) {
    const baseDir = config.source ? path.dirname(path.resolve(config.source)) : process.cwd();
    const loaded = await loadPlugins(
      next.plugins.map((p) => ({ name: p.name, module: p.module, timeoutMs: p.timeout_ms })),
      baseDir,
    );
    if (!loaded.ok) return loaded.errors.join("; ");
    plugins = loaded.value;
  }
  runtime.apply({ ...config, route: next }, plugins);
  return undefined;
}

export function followControlPlane(options: FollowOptions): AdsClient {
  const { followed, logger } = options;
  return startAdsClient({
    address: options.address,
    node: { id: options.nodeId, cluster: EXTPROC_NODE_GROUP, ...(options.nodeName !== undefined && { metadata: { node_name: options.nodeName } }) },
    logger,
    ...(options.backoff && { backoff: options.backoff }),
    subscriptions: [
      {
        typeUrl: TYPE_URLS.routingPolicy,
        names: [POLICY_NAME],
        apply: async (resources: readonly AnyMessage[], version: string) => {
          const resource = resources[0];
          // No policy published: the replica keeps the route section it has.
          if (resource === undefined) return undefined;
          const error = await applyRoutingPolicy(followed.runtime, decodeRoutingPolicy(resource).route);
          if (error === undefined) logger.info({ version, snapshot: followed.runtime.current().version }, "routing policy applied");
          return error;
        },
      },
      {
        typeUrl: TYPE_URLS.endpoints,
        names: [EDGE_CLUSTER],
        apply: (resources: readonly AnyMessage[]) => {
          const resource = resources[0];
          followed.edgeAgents.update(resource === undefined ? [] : decodeEdgeEndpoints(resource));
          return undefined;
        },
      },
    ],
  });
}
