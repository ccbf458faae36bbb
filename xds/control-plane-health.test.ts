/** The control plane answers grpc.health.v1 (Kubernetes' gRPC probes) for itself and each service it runs. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { HealthClient } from "../test/support/health-client.ts";
import { testConfig } from "../test/support/gateway.ts";
import { silentLogger } from "../common/telemetry/logger.ts";
import { startControlPlane } from "./control-plane.ts";

test("grpc.health.v1: SERVING for the server, ADS and the edge registry; an unknown service is NOT_FOUND", async () => {
  const running = await startControlPlane(testConfig(""), silentLogger(), 0, "127.0.0.1", 0);
  const health = new HealthClient(`127.0.0.1:${running.port}`);
  try {
    for (const service of ["", "envoy.service.discovery.v3.AggregatedDiscoveryService", "gearbox.v1.EdgeRegistryService"]) {
      assert.equal(await health.check(service), "SERVING", service || "(server)");
    }
    await assert.rejects(health.check("no.such.Service"), /NOT_FOUND/);
  } finally {
    health.close();
    await running.close();
  }
});
