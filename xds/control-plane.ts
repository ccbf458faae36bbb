/**
 * The control plane: config + live edge agents → one snapshot, republished on every change, and
 * the gRPC server (port 18000) that carries ADS and the edge registry.
 *
 * The snapshot holds a cluster per provider, the two edge clusters, the `gearbox-edge` endpoints
 * (one per live agent, with its models and load), the routing policy (`route:` of the config)
 * and an assignment per connected agent (from `edge.assignments`). Registry changes are
 * coalesced: a join or a leave is published within `JOIN_DELAY_MS`, load-only changes at most
 * every `LOAD_DELAY_MS`, so a thousand heartbeating agents do not rebuild the snapshot a thousand
 * times a second. A new config (file change) is validated by the caller and applied whole.
 *
 * After a start, nothing is published for `xds.startup_grace_ms`: agents that were connected to
 * the previous process reconnect meanwhile, and subscribers (which keep their last state while
 * they wait) never see an edge set emptied by the restart. An agent whose backoff outlasts the
 * grace rejoins when it reconnects.
 */
import * as grpc from "@grpc/grpc-js";
import { HealthImplementation } from "grpc-health-check";
import type { GatewayConfig } from "../extproc/config/load.ts";
import type { Logger } from "../common/telemetry/logger.ts";
import { ok, type Result } from "../common/result.ts";
import { assignmentFor } from "./assignments.ts";
import { DEFAULT_GROUP, SnapshotCache } from "./cache/cache.ts";
import { createSnapshot, type Snapshot } from "./cache/snapshot.ts";
import type { AgentView, RegistryChange } from "./registry/registry.ts";
import { EdgeRegistry } from "./registry/registry.ts";
import { addEdgeRegistryService } from "./registry/service.ts";
import type { EdgeEndpoint } from "../common/registry/endpoint.ts";
import { edgeClusters, edgeLoadAssignment, providerCluster } from "./resources/envoy.ts";
import { edgeAssignmentResource, routingPolicyResource } from "./resources/gearbox.ts";
import { addAdsService, type AdsStats } from "./server/ads.ts";
import type { Tracer } from "@opentelemetry/api";
import { recordSpan } from "./tracing.ts";

export const POLICY_NAME = "default";
const JOIN_DELAY_MS = 20;
const LOAD_DELAY_MS = 1_000;

function endpointOf(agent: AgentView): EdgeEndpoint {
  return {
    agentId: agent.agentId,
    node: agent.node,
    address: agent.address,
    models: agent.models.map((m) => m.id),
    inFlight: agent.load.inFlight,
    queued: agent.load.queued,
    maxConcurrent: agent.capacity.maxConcurrent,
    maxQueue: agent.capacity.maxQueue,
    healthy: true,
  };
}

export class ControlPlane {
  readonly cache = new SnapshotCache();
  readonly registry: EdgeRegistry;
  private config: GatewayConfig;
  private timer: NodeJS.Timeout | undefined;
  private dueAt = Infinity;
  private published: Snapshot | undefined;
  private warming: NodeJS.Timeout | undefined;

  constructor(
    config: GatewayConfig,
    private readonly logger: Logger,
    graceMs = config.xds.startup_grace_ms,
    private readonly tracer?: Tracer,
  ) {
    this.config = config;
    this.registry = new EdgeRegistry({
      heartbeatIntervalMs: config.xds.heartbeat_interval_ms,
      expiryMs: config.xds.expiry_ms,
      assignmentsFor: (agent) => {
        const models = assignmentFor(this.config.edge.assignments, agent.node);
        // No assignments configured: the agent keeps whatever it was started with.
        return this.config.edge.assignments.length === 0 ? undefined : models;
      },
      logger,
    });
    this.registry.onChange((change) => this.changed(change));
    const first = this.build();
    if (!first.ok) throw new Error(`control plane: the first snapshot is inconsistent: ${first.errors.join("; ")}`);
    if (graceMs === 0) {
      this.publish();
    } else {
      this.warming = setTimeout(() => {
        this.warming = undefined;
        this.publish();
      }, graceMs);
      this.warming.unref();
    }
  }

  /** True until the startup grace is over and the first snapshot is out. */
  get warmingUp(): boolean {
    return this.warming !== undefined;
  }

  /** The snapshot subscribers are served now. */
  get snapshot(): Snapshot | undefined {
    return this.published;
  }

  /** Applies a new (validated) config: policy, clusters and assignments. */
  setConfig(config: GatewayConfig): Result<Snapshot> {
    this.config = config;
    this.registry.reassign();
    return this.publish();
  }

  /**
   * Builds and publishes the snapshot now (during the startup grace: builds only). An
   * inconsistent one is refused; the last good stays.
   */
  publish(): Result<Snapshot> {
    this.cancelTimer();
    const snapshot = this.build();
    if (!snapshot.ok) {
      this.logger.error({ errors: snapshot.errors }, "control plane: snapshot refused (inconsistent); subscribers keep the last good one");
      recordSpan(this.tracer, "gearbox.xds.publish", "internal", () => ({ "xds.published": false }), snapshot.errors.join("; "));
      return snapshot;
    }
    if (this.warming !== undefined) return snapshot;
    this.published = this.cache.setSnapshot(DEFAULT_GROUP, snapshot.value);
    const published = this.published;
    recordSpan(this.tracer, "gearbox.xds.publish", "internal", () => ({
      "xds.published": true,
      "xds.version": published.version,
      "gearbox.edge.agents": this.registry.agents().length,
    }));
    return ok(this.published);
  }

  private build(): Result<Snapshot> {
    const agents = this.registry.agents();
    const resources = [
      ...this.config.providers.map(providerCluster),
      ...edgeClusters(),
      edgeLoadAssignment(agents.map(endpointOf)),
      routingPolicyResource(POLICY_NAME, this.config.route),
      ...agents.map((a) => edgeAssignmentResource({ agentId: a.agentId, models: assignmentFor(this.config.edge.assignments, a.node) })),
    ];
    return createSnapshot(resources);
  }

  close(): void {
    this.cancelTimer();
    if (this.warming !== undefined) clearTimeout(this.warming);
    this.warming = undefined;
    this.registry.close();
  }

  private changed(change: RegistryChange): void {
    this.schedule(change.kind === "updated" ? LOAD_DELAY_MS : JOIN_DELAY_MS);
  }

  private schedule(delayMs: number): void {
    const due = Date.now() + delayMs;
    if (this.timer !== undefined && this.dueAt <= due) return;
    this.cancelTimer();
    this.dueAt = due;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.dueAt = Infinity;
      this.publish();
    }, delayMs);
    this.timer.unref();
  }

  private cancelTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.dueAt = Infinity;
  }
}

export interface RunningControlPlane {
  plane: ControlPlane;
  port: number;
  ads: AdsStats;
  /** Stops accepting, ends every stream (agents and subscribers reconnect elsewhere or later). */
  close(): Promise<void>;
}

const ADS_SERVICE = "envoy.service.discovery.v3.AggregatedDiscoveryService";
const EDGE_REGISTRY_SERVICE = "gearbox.v1.EdgeRegistryService";

/** Starts the xDS gRPC server (ADS + edge registry + grpc.health.v1) on `host:port` (0 → a free port). */
/** `tracer`: spans for registrations, reports, snapshot publications and ADS pushes (`telemetry.tracing`). */
export async function startControlPlane(
  config: GatewayConfig,
  logger: Logger,
  port: number,
  host = "0.0.0.0",
  graceMs = config.xds.startup_grace_ms,
  tracer?: Tracer,
): Promise<RunningControlPlane> {
  const plane = new ControlPlane(config, logger, graceMs, tracer);
  const server = new grpc.Server({ "grpc.keepalive_time_ms": 30_000, "grpc.keepalive_permit_without_calls": 1 });
  // grpc.health.v1 for Kubernetes' gRPC probes: the whole server and each service it runs.
  const health = new HealthImplementation({ "": "SERVING", [ADS_SERVICE]: "SERVING", [EDGE_REGISTRY_SERVICE]: "SERVING" });
  health.addToServer(server);
  const ads = addAdsService(server, plane.cache, logger, tracer);
  addEdgeRegistryService(server, plane.registry, logger, tracer);
  const bound = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host}:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  return {
    plane,
    port: bound,
    ads,
    close: () =>
      new Promise<void>((resolve) => {
        for (const service of ["", ADS_SERVICE, EDGE_REGISTRY_SERVICE]) health.setStatus(service, "NOT_SERVING");
        plane.close();
        server.forceShutdown();
        resolve();
      }),
  };
}
