import assert from "node:assert/strict";
import { test } from "node:test";
import { parseConfigText, resolveConfig } from "../../extproc/config/load.ts";
import type { Provider } from "../../extproc/providers/provider.ts";
import { parseBootstrap, readEnvoyYaml } from "../../test/envoy/load-config.ts";
import { toPlainObject } from "../../test/envoy/proto-json.ts";
import { checkWithEnvoyProtos, envoyPlain } from "../../test/xds/envoy-json.ts";
import { agent } from "../../test/xds/ads-fixtures.ts";
import { packAny, TYPE_URLS, type AnyMessage } from "../../common/control-plane/protos.ts";
import {
  decodeEdgeEndpoints,
  EDGE_CLUSTER,
  EDGE_DIRECT_CLUSTER,
  edgeClusters,
  edgeLoadAssignment,
  grpcCluster,
  grpcListener,
  grpcRouteConfig,
  providerCluster,
} from "./envoy.ts";

function providers(): Provider[] {
  const raw = parseConfigText(
    [
      "providers:",
      "  - { name: openai, kind: openai }",
      "  - { name: anthropic, kind: anthropic }",
      "  - { name: gemini, kind: gemini }",
      "  - { name: local, kind: ollama, base_url: 'http://127.0.0.1:11434' }",
      "  - { name: proxy, kind: openai, base_url: 'https://llm.internal.example:8443/v1' }",
    ].join("\n"),
    "test.yaml",
  );
  assert.ok(raw.ok, raw.ok ? "" : raw.errors.join("; "));
  const resolved = resolveConfig(raw.value, {}, "test.yaml");
  assert.ok(resolved.ok, resolved.ok ? "" : resolved.errors.join("; "));
  return resolved.value.providers;
}

function provider(name: string): Provider {
  const found = providers().find((p) => p.name === name);
  assert.ok(found, name);
  return found;
}

/** Passes Envoy's protos strictly, and the JSON form loses nothing (re-encodes to the same bytes). */
function assertEnvoyValid(any: AnyMessage): void {
  const { result, reencoded } = checkWithEnvoyProtos(any);
  assert.ok(result.ok, result.ok ? "" : result.errors.join("\n"));
  assert.ok(reencoded?.equals(any.value), `${any.type_url}: proto JSON round trip changed the bytes`);
}

/** Clusters of `envoy/sidecar.yaml`, by name, in plain form. */
function sidecarClusters(): Map<string, Record<string, unknown>> {
  const parsed = parseBootstrap(readEnvoyYaml("sidecar.yaml"));
  assert.ok(parsed.ok);
  const bootstrap = toPlainObject(parsed.type, parsed.message) as { static_resources: { clusters: Record<string, unknown>[] } };
  return new Map(bootstrap.static_resources.clusters.map((c) => [String(c["name"]), c]));
}

function withoutName(cluster: Record<string, unknown>): Record<string, unknown> {
  const { name: _name, load_assignment, ...rest } = cluster;
  const assignment = load_assignment as Record<string, unknown> | undefined;
  if (assignment === undefined) return rest;
  const { cluster_name: _clusterName, ...endpoints } = assignment;
  return { ...rest, load_assignment: endpoints };
}

test("the strict check catches what Envoy would refuse (negative control)", () => {
  const bad = packAny(TYPE_URLS.cluster, { name: "", type: "EDS", lb_policy: "LOAD_BALANCING_POLICY_CONFIG" });
  const { result } = checkWithEnvoyProtos(bad);
  assert.equal(result.ok, false);
  assert.match(result.ok ? "" : result.errors.join("\n"), /name/);
});

test("every builder's output is valid for Envoy's protos", () => {
  const resources = [
    ...providers().map(providerCluster),
    ...edgeClusters(),
    edgeLoadAssignment([agent(), agent({ agentId: "agent-2", node: "node-b", address: "[fd00::2]:8088", healthy: false })]),
    edgeLoadAssignment([]),
    grpcCluster("echo"),
    grpcListener("echo", "echo-routes"),
    grpcRouteConfig("echo-routes", "echo"),
  ];
  for (const resource of resources) assertEnvoyValid(resource);
});

test("provider clusters for the cloud providers match envoy/sidecar.yaml's clusters", () => {
  const sidecar = sidecarClusters();
  for (const name of ["openai", "anthropic", "gemini"]) {
    const built = envoyPlain(providerCluster(provider(name)));
    assert.equal(built["name"], name);
    assert.deepEqual(built, sidecar.get(name), `cluster ${name}`);
  }
});

test("a provider on a custom https port keeps TLS with SNI = its host; plain http on an IP is a static HTTP/1.1 cluster", () => {
  const proxy = envoyPlain(providerCluster(provider("proxy")));
  assert.equal(proxy["type"], "LOGICAL_DNS");
  const socket = JSON.stringify(proxy["load_assignment"]);
  assert.match(socket, /"address":"llm\.internal\.example","port_value":8443/);
  assert.equal((proxy["transport_socket"] as { typed_config: { sni: string } }).typed_config.sni, "llm.internal.example");

  const local = envoyPlain(providerCluster(provider("local")));
  assert.equal(local["type"], "STATIC");
  assert.equal(local["transport_socket"], undefined);
  assert.match(JSON.stringify(local["load_assignment"]), /"address":"127\.0\.0\.1","port_value":11434/);
  assert.match(JSON.stringify(local["typed_extension_protocol_options"]), /"explicit_http_config":\{"http_protocol_options":\{\}\}/);
});

test("the direct edge cluster is the sidecar's `edge` cluster (ORIGINAL_DST on the edge-endpoint dynamic metadata)", () => {
  const [eds, direct] = edgeClusters().map(envoyPlain);
  assert.ok(eds && direct);
  assert.equal(direct["name"], EDGE_DIRECT_CLUSTER);
  assert.deepEqual(withoutName(direct), withoutName(sidecarClusters().get("edge") ?? {}));

  assert.equal(eds["name"], EDGE_CLUSTER);
  assert.equal(eds["type"], "EDS");
  assert.deepEqual(eds["eds_cluster_config"], { eds_config: { ads: {}, resource_api_version: "V3" } });
  assert.deepEqual(eds["typed_extension_protocol_options"], direct["typed_extension_protocol_options"]);
});

test("edge endpoints: one locality per node, agent data in filter_metadata.gearbox, and back", () => {
  const agents = [
    agent({ agentId: "b-1", node: "node-b", address: "10.0.0.2:8088", models: ["phi"], inFlight: 2, queued: 1, maxConcurrent: 2, maxQueue: 4 }),
    agent({ agentId: "a-2", node: "node-a", address: "[fd00::1]:9000", healthy: false }),
    agent({ agentId: "a-1", node: "node-a", address: "10.0.0.1:8088", models: ["qwen", "phi"] }),
  ];
  const any = edgeLoadAssignment(agents);
  const plain = envoyPlain(any) as { cluster_name: string; endpoints: { locality: { sub_zone: string }; lb_endpoints: { health_status: string }[] }[] };
  assert.equal(plain.cluster_name, EDGE_CLUSTER);
  assert.deepEqual(
    plain.endpoints.map((l) => l.locality.sub_zone),
    ["node-a", "node-b"],
  );
  assert.deepEqual(
    plain.endpoints.map((l) => l.lb_endpoints.map((e) => e.health_status)),
    [["HEALTHY", "UNHEALTHY"], ["HEALTHY"]],
  );

  const decoded = decodeEdgeEndpoints(any);
  const byId = (list: typeof agents) => [...list].sort((x, y) => x.agentId.localeCompare(y.agentId));
  assert.deepEqual(byId(decoded), byId(agents));
  assert.deepEqual(edgeLoadAssignment([...agents].reverse()).value, any.value, "the order of agents does not change the bytes");
});

test("edge endpoints refuse what they cannot carry, and decoding refuses foreign resources", () => {
  assert.throws(() => edgeLoadAssignment([agent({ address: "edge-1.local:8088" })]), /edge-1\.local:8088.*not ip:port/);
  assert.throws(() => decodeEdgeEndpoints(grpcCluster("x")), /expected a .*ClusterLoadAssignment/);
  const foreign = packAny(TYPE_URLS.endpoints, {
    cluster_name: "x",
    endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: "10.0.0.9", port_value: 80 } } } }] }],
  });
  assert.throws(() => decodeEdgeEndpoints(foreign), /endpoint 10\.0\.0\.9:80: no filter_metadata\.gearbox/);
});

test("the gRPC listener is an API listener fetching its routes over ADS, ending in the router", () => {
  const listener = envoyPlain(grpcListener("echo", "echo-routes")) as { api_listener: { api_listener: Record<string, unknown> } };
  const hcm = listener.api_listener.api_listener;
  assert.equal(hcm["@type"], "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager");
  assert.deepEqual(hcm["rds"], { config_source: { ads: {}, resource_api_version: "V3" }, route_config_name: "echo-routes" });
  assert.deepEqual(
    (hcm["http_filters"] as { typed_config: { "@type": string } }[]).map((f) => f.typed_config["@type"]),
    ["type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"],
  );
  const routes = envoyPlain(grpcRouteConfig("echo-routes", "echo"));
  assert.match(JSON.stringify(routes), /"route":\{"cluster":"echo"\}/);
});
