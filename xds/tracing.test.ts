import assert from "node:assert/strict";
import { test } from "node:test";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import { silentLogger } from "../common/telemetry/logger.ts";
import { createTracing } from "../common/telemetry/tracing.ts";
import { testConfig } from "../test/support/gateway.ts";
import { AdsProbe } from "../test/xds/ads-probe.ts";
import { helloFor, openRaw, registryClient } from "../test/xds/registry-support.ts";
import { eventually } from "../test/support/eventually.ts";
import { startControlPlane } from "./control-plane.ts";
import type { DiscoveryRequest, DiscoveryResponse } from "./server/messages.ts";
import { TYPE_URLS } from "../common/control-plane/protos.ts";

test("control plane spans: an agent's registration and report, the snapshot its join publishes, an ADS push", async () => {
  const exporter = new InMemorySpanExporter();
  const tracing = createTracing({ enable: true, sample_ratio: 1 }, { defaultServiceName: "gearbox-xds", exporter });
  const plane = await startControlPlane(testConfig("providers: []\n"), silentLogger(), 0, "127.0.0.1", 0, tracing.tracer);
  const address = `127.0.0.1:${plane.port}`;
  const client = registryClient(address);
  const probe = new AdsProbe<DiscoveryRequest, DiscoveryResponse>(address, "StreamAggregatedResources");
  try {
    probe.send({ node: { id: "envoy-1" }, type_url: TYPE_URLS.cluster });
    const clusters = await probe.next();
    const agent = openRaw(client);
    agent.send(helloFor("agent-1"));
    await agent.response(0);
    agent.send({ heartbeat: { in_flight: 2, queued: 1, models: [] } });
    const named = (name: string) => exporter.getFinishedSpans().filter((s) => s.name === name);
    await eventually(() => named("gearbox.edge_registry.report").length > 0 && named("gearbox.xds.publish").length > 0, "report and publish spans");
    const register = named("gearbox.edge_registry.register");
    assert.equal(register.length, 1);
    assert.equal(register[0]?.attributes["gearbox.edge.agent_id"], "agent-1");
    assert.equal(register[0]?.attributes["gearbox.edge.agent"], "127.0.0.1:8088");
    const report = named("gearbox.edge_registry.report")[0];
    assert.equal(report?.attributes["gearbox.edge.in_flight"], 2);
    assert.equal(report?.attributes["gearbox.edge.queued"], 1);
    const published = named("gearbox.xds.publish").at(-1);
    assert.equal(published?.attributes["xds.published"], true);
    assert.equal(published?.attributes["gearbox.edge.agents"], 1);
    const pushes = named("gearbox.xds.push").filter((s) => s.attributes["xds.node"] === "envoy-1");
    assert.equal(pushes.length, 1, "the answer to the subscription (clusters do not change with a join)");
    assert.equal(pushes[0]?.attributes["xds.type_url"], TYPE_URLS.cluster);
    assert.equal(pushes[0]?.attributes["xds.version"], clusters.version_info);
    assert.equal(pushes[0]?.attributes["xds.resources"], clusters.resources?.length);
    agent.call.end();
  } finally {
    await probe.close();
    client.close();
    await plane.close();
    await tracing.shutdown();
  }
});
