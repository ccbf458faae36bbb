/**
 * The ADS server: `envoy.service.discovery.v3.AggregatedDiscoveryService` over a
 * `SnapshotCache`, both variants: state of the world (`StreamAggregatedResources`, Envoy's
 * default and what @grpc/grpc-js-xds speaks) and delta (`DeltaAggregatedResources`). The server
 * only reads the cache; whoever builds snapshots publishes them with `cache.setSnapshot`, and
 * every open stream of the affected groups gets what changed right away.
 */
import type * as grpc from "@grpc/grpc-js";
import type { Logger } from "../../common/telemetry/logger.ts";
import type { SnapshotCache } from "../cache/cache.ts";
import { adsService } from "../../common/control-plane/protos.ts";
import { DeltaStream } from "./delta-stream.ts";
import type { DeltaDiscoveryRequest, DeltaDiscoveryResponse, DiscoveryRequest, DiscoveryResponse } from "./messages.ts";
import { SotwStream } from "./sotw-stream.ts";
import { createAdsStats, type AdsStats } from "./stats.ts";
import type { Tracer } from "@opentelemetry/api";

export type { AdsStats } from "./stats.ts";

/** Registers ADS on `server`; returns its live counters. */
export function addAdsService(server: grpc.Server, cache: SnapshotCache, logger: Logger, tracer?: Tracer): AdsStats {
  const stats = createAdsStats();
  const deps = { cache, logger: logger.child({ component: "ads" }), stats, tracer };
  server.addService(adsService().service, {
    StreamAggregatedResources: (call: grpc.ServerDuplexStream<DiscoveryRequest, DiscoveryResponse>) => new SotwStream(call, deps, "sotw").start(),
    DeltaAggregatedResources: (call: grpc.ServerDuplexStream<DeltaDiscoveryRequest, DeltaDiscoveryResponse>) => new DeltaStream(call, deps, "delta").start(),
  });
  return stats;
}
