/**
 * Gearbox's ADS server driving a real xDS client nobody here wrote: @grpc/grpc-js-xds (the
 * `xds:` resolver of grpc-js). The client resolves `xds:///echo` through Listener → (RDS)
 * RouteConfiguration → Cluster (EDS) → ClusterLoadAssignment, all served by Gearbox over one
 * state-of-the-world ADS stream, validates each resource with its own rules (a rejected one
 * would be NACKed and show up in the server's counters), and sends real calls to the endpoint.
 * Then the snapshot moves the endpoint to a second server and the calls follow.
 */
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import * as grpc from "@grpc/grpc-js";
import { silentLogger } from "../../common/telemetry/logger.ts";
import { edgeLoadAssignment, grpcCluster, grpcListener, grpcRouteConfig } from "../../xds/resources/envoy.ts";
import { startAdsServer, type AdsTestServer } from "./ads-probe.ts";
import { agent, snapshotOf } from "./ads-fixtures.ts";

const require = createRequire(import.meta.url);

/** A unary method with raw bytes in and out: no proto needed, the answer names the server. */
const ECHO: grpc.ServiceDefinition = {
  Echo: {
    path: "/gearbox.test.Echo/Echo",
    requestStream: false,
    responseStream: false,
    requestSerialize: (b: Buffer) => b,
    requestDeserialize: (b: Buffer) => b,
    responseSerialize: (b: Buffer) => b,
    responseDeserialize: (b: Buffer) => b,
  },
};
const EchoClient = grpc.makeGenericClientConstructor(ECHO, "Echo");

const NODE_GROUP = "grpc-clients";

async function echoServer(name: string): Promise<{ server: grpc.Server; address: string }> {
  const server = new grpc.Server();
  server.addService(ECHO, {
    Echo: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => callback(null, Buffer.from(name)),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
  );
  return { server, address: `127.0.0.1:${port}` };
}

/** Listener `echo` → routes `echo-routes` → EDS cluster `echo` → the endpoint at `address`. */
function echoSnapshot(address: string) {
  return snapshotOf([
    grpcListener("echo", "echo-routes"),
    grpcRouteConfig("echo-routes", "echo"),
    grpcCluster("echo"),
    edgeLoadAssignment([agent({ agentId: "echo", address })], "echo"),
  ]);
}

function call(client: grpc.Client): Promise<string> {
  const echo = (client as unknown as Record<string, (req: Buffer, opts: grpc.CallOptions, cb: grpc.requestCallback<Buffer>) => void>)["Echo"];
  if (!echo) throw new Error("no Echo method");
  return new Promise((resolve, reject) =>
    echo.call(client, Buffer.from("ping"), { deadline: Date.now() + 10_000 }, (err, reply) => (err ? reject(err) : resolve(String(reply)))),
  );
}

let ads: AdsTestServer;
let first: { server: grpc.Server; address: string };
let second: { server: grpc.Server; address: string };
let client: grpc.Client;

before(async () => {
  first = await echoServer("first");
  second = await echoServer("second");
  ads = await startAdsServer(silentLogger());
  // The default group serves a listener that points nowhere useful: the client must get its own group's.
  ads.cache.setSnapshot("default", snapshotOf([grpcListener("echo", "nowhere"), grpcRouteConfig("nowhere", "nowhere")]));
  ads.cache.setSnapshot(NODE_GROUP, echoSnapshot(first.address));
  process.env.GRPC_XDS_BOOTSTRAP_CONFIG = JSON.stringify({
    xds_servers: [{ server_uri: ads.address, channel_creds: [{ type: "insecure" }], server_features: ["xds_v3"] }],
    node: { id: "grpc-xds-test", cluster: NODE_GROUP, locality: {} },
  });
  (require("@grpc/grpc-js-xds") as { register(): void }).register();
  client = new EchoClient("xds:///echo", grpc.credentials.createInsecure());
});

after(async () => {
  client.close();
  first.server.forceShutdown();
  second.server.forceShutdown();
  await ads.close();
});

test("a gRPC call through xds:///echo reaches the endpoint Gearbox's snapshot names, every resource ACKed", async () => {
  assert.equal(await call(client), "first");
  assert.equal(ads.stats.nacks, 0, "grpc-js-xds refused a resource");
  assert.ok(ads.stats.acks >= 4, `listener, routes, cluster and endpoints are ACKed (acks: ${ads.stats.acks})`);
});

test("a new snapshot moves the calls to the second server", async () => {
  ads.cache.setSnapshot(NODE_GROUP, echoSnapshot(second.address));
  let answer = await call(client);
  // The client applies the new endpoints asynchronously: poll, bounded.
  for (let i = 0; i < 100 && answer !== "second"; i++) {
    await sleep(50);
    answer = await call(client);
  }
  assert.equal(answer, "second");
  assert.equal(ads.stats.nacks, 0);
});
