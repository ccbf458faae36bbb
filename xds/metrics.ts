/**
 * The control plane's Prometheus metrics, read at scrape time: ADS streams (Envoy and ext_proc
 * replicas subscribed now), pushes, ACKs and NACKs, and the live edge agents with their load
 * (requests in flight and queued against their capacity). No per-agent labels: a fleet of
 * thousands of agents stays a handful of series.
 */
import { Registry } from "prom-client";
import { gaugeFrom, totalFrom } from "../common/telemetry/scraped.ts";
import type { AgentView } from "./registry/registry.ts";
import type { AdsStats } from "./server/stats.ts";

/** What the metrics read: a running control plane (`startControlPlane`) fits. */
export interface ControlPlaneView {
  ads: AdsStats;
  plane: { registry: { agents(): readonly AgentView[] } };
}

export function controlPlaneMetrics(running: ControlPlaneView): Registry {
  const registry = new Registry();
  const registers = [registry];
  const { ads, plane } = running;
  const gauge = (name: string, help: string, read: () => number): void => gaugeFrom(registers, name, help, read);
  const total = (name: string, help: string, read: () => number): void => totalFrom(registers, name, help, read);
  gauge("gearbox_xds_connections", "ADS streams open now (Envoy proxies and ext_proc replicas following the control plane).", () => ads.openStreams);
  total("gearbox_xds_pushes_total", "ADS responses sent.", () => ads.pushes);
  total("gearbox_xds_acks_total", "ADS requests that acknowledged the latest response.", () => ads.acks);
  total("gearbox_xds_nacks_total", "ADS requests that refused the latest response.", () => ads.nacks);
  const load = () => {
    let inFlight = 0;
    let queued = 0;
    let capacity = 0;
    const agents = plane.registry.agents();
    for (const a of agents) {
      inFlight += a.load.inFlight;
      queued += a.load.queued;
      capacity += a.capacity.maxConcurrent;
    }
    return { agents: agents.length, inFlight, queued, capacity };
  };
  gauge("gearbox_edge_agents_connected", "Edge agents registered with the control plane now.", () => load().agents);
  gauge("gearbox_edge_agents_inflight_requests", "Requests generating on all edge agents (as last reported).", () => load().inFlight);
  gauge("gearbox_edge_agents_queued_requests", "Requests queued on all edge agents (as last reported).", () => load().queued);
  gauge("gearbox_edge_agents_capacity_requests", "Concurrent requests all edge agents can generate (sum of max_concurrent).", () => load().capacity);
  return registry;
}
