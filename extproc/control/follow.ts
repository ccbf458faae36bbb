/**
 * An ext_proc replica following the control plane: the routing policy (`gearbox.v1.RoutingPolicy`
 * `default`) and the live edge agents (the `gearbox-edge` ClusterLoadAssignment) arrive over ADS
 * and are applied without dropping a request.
 *
 * - Policy: validated with the config file's own schema; plugins named by it are loaded first.
 *   Valid → the shared `deps.config` is replaced by a copy with the new `route:` (requests already
 *   running keep the config they started with); invalid → NACK naming the field, the last good
 *   policy stays.
 * - Edge agents: replace the live set the processor picks from.
 */
import path from "node:path";
import { routeSchema } from "../config/schema.ts";
import type { GatewayConfig } from "../config/load.ts";
import type { LiveEdgeAgents } from "../edge/agents.ts";
import type { ProcessorDeps } from "../processor/processor.ts";
import { loadPlugins } from "../routing/policy/index.ts";
import type { Logger } from "../../common/telemetry/logger.ts";
import { startAdsClient, type AdsClient } from "../../xds/client/ads-client.ts";
import { TYPE_URLS, type AnyMessage } from "../../common/control-plane/protos.ts";
import { decodeEdgeEndpoints } from "../../xds/resources/envoy.ts";
import { decodeRoutingPolicy } from "../../xds/resources/gearbox.ts";

/** The deps object the servers share; this module swaps its `config` and `plugins`. */
export interface LiveDeps extends ProcessorDeps {
  config: GatewayConfig;
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
  deps: LiveDeps;
  logger: Logger;
  backoff?: { initialMs: number; maxMs: number };
}

/** Validates and applies a pushed `route:` section; returns the NACK message when it is refused. */
export async function applyRoutingPolicy(deps: LiveDeps, route: unknown): Promise<string | undefined> {
  const parsed = routeSchema.safeParse(route);
  if (!parsed.success) return parsed.error.issues.map((i) => `route.${i.path.join(".")}: ${i.message}`).join("; ");
  const next = parsed.data;
  let plugins = deps.plugins;
  if (JSON.stringify(next.plugins) !== JSON.stringify(deps.config.route.plugins)) {
    const baseDir = deps.config.source ? path.dirname(path.resolve(deps.config.source)) : process.cwd();
    const loaded = await loadPlugins(
      next.plugins.map((p) => ({ name: p.name, module: p.module, timeoutMs: p.timeout_ms })),
      baseDir,
    );
    if (!loaded.ok) return loaded.errors.join("; ");
    plugins = loaded.value;
  }
  deps.config = { ...deps.config, route: next };
  deps.plugins = plugins;
  return undefined;
}

export function followControlPlane(options: FollowOptions): AdsClient {
  const { deps, logger } = options;
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
          const error = await applyRoutingPolicy(deps, decodeRoutingPolicy(resource).route);
          if (error === undefined) logger.info({ version }, "routing policy applied");
          return error;
        },
      },
      {
        typeUrl: TYPE_URLS.endpoints,
        names: [EDGE_CLUSTER],
        apply: (resources: readonly AnyMessage[]) => {
          const resource = resources[0];
          deps.edgeAgents.update(resource === undefined ? [] : decodeEdgeEndpoints(resource));
          return undefined;
        },
      },
    ],
  });
}
