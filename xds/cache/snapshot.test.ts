import assert from "node:assert/strict";
import { test } from "node:test";
import { agent } from "../../test/xds/ads-fixtures.ts";
import { packAny, TYPE_URLS } from "../../common/control-plane/protos.ts";
import { edgeClusters, edgeLoadAssignment, grpcCluster, grpcListener, grpcRouteConfig } from "../resources/envoy.ts";
import { routingPolicyResource } from "../resources/gearbox.ts";
import { createSnapshot, withVersion } from "./snapshot.ts";
import { compareVersions, nextVersion } from "./version.ts";

function errorsOf(result: ReturnType<typeof createSnapshot>): string[] {
  assert.equal(result.ok, false, "the snapshot should fail the consistency check");
  return result.ok ? [] : result.errors;
}

test("a consistent snapshot keeps every resource by type and name, each with a version", () => {
  const result = createSnapshot([
    ...edgeClusters(),
    edgeLoadAssignment([agent()]),
    grpcListener("echo", "echo-routes"),
    grpcRouteConfig("echo-routes", "gearbox-edge"),
    routingPolicyResource("default", { rules: [] }),
  ]);
  assert.ok(result.ok, result.ok ? "" : result.errors.join("; "));
  const snapshot = result.value;
  assert.deepEqual([...(snapshot.resources.get(TYPE_URLS.cluster)?.keys() ?? [])], ["gearbox-edge", "edge"]);
  assert.deepEqual([...(snapshot.resources.get(TYPE_URLS.endpoints)?.keys() ?? [])], ["gearbox-edge"]);
  assert.deepEqual([...(snapshot.resources.get(TYPE_URLS.routingPolicy)?.keys() ?? [])], ["default"]);
  assert.match(snapshot.version, /^\d{15}-\d{6}$/);
  assert.match(snapshot.resourceVersions.get(TYPE_URLS.endpoints)?.get("gearbox-edge") ?? "", /^[0-9a-f]{16}$/);
  assert.ok(Object.isFrozen(snapshot));
});

test("resource and type versions follow the bytes: equal bytes, equal versions; any change, others", () => {
  const versions = (load: number) => {
    const result = createSnapshot([...edgeClusters(), edgeLoadAssignment([agent({ inFlight: load })])]);
    assert.ok(result.ok);
    const { resourceVersions, typeVersions } = result.value;
    return {
      endpoint: resourceVersions.get(TYPE_URLS.endpoints)?.get("gearbox-edge"),
      endpoints: typeVersions.get(TYPE_URLS.endpoints),
      clusters: typeVersions.get(TYPE_URLS.cluster),
    };
  };
  assert.deepEqual(versions(1), versions(1));
  assert.notEqual(versions(1).endpoint, versions(2).endpoint);
  assert.notEqual(versions(1).endpoints, versions(2).endpoints);
  assert.equal(versions(1).clusters, versions(2).clusters, "clusters did not change");
});

test("an EDS cluster without its ClusterLoadAssignment fails, naming both (service_name counts)", () => {
  const renamed = packAny(TYPE_URLS.cluster, { name: "svc", type: "EDS", eds_cluster_config: { eds_config: { ads: {} }, service_name: "svc-endpoints" } });
  const errors = errorsOf(createSnapshot([grpcCluster("echo"), renamed, edgeLoadAssignment([], "svc")]));
  assert.equal(errors.length, 2);
  assert.match(errors[0] ?? "", /Cluster "echo" \(EDS\) needs the ClusterLoadAssignment "echo"/);
  assert.match(errors[1] ?? "", /Cluster "svc" \(EDS\) needs the ClusterLoadAssignment "svc-endpoints"/);
});

test("a listener whose RDS route configuration is missing fails, and every problem is reported at once", () => {
  const errors = errorsOf(createSnapshot([grpcListener("echo", "echo-routes"), grpcCluster("echo")]));
  assert.deepEqual(errors.length, 2);
  assert.ok(errors.some((e) => /Listener "echo" needs the RouteConfiguration "echo-routes"/.test(e)));
  assert.ok(errors.some((e) => /ClusterLoadAssignment "echo"/.test(e)));
});

test("non-EDS clusters and unreferenced endpoints need nothing else", () => {
  const result = createSnapshot([packAny(TYPE_URLS.cluster, { name: "static", type: "STATIC" }), edgeLoadAssignment([agent()])]);
  assert.ok(result.ok);
});

test("duplicate names, nameless resources and undecodable bytes are errors", () => {
  const errors = errorsOf(
    createSnapshot([
      routingPolicyResource("default", {}),
      routingPolicyResource("default", { other: true }),
      packAny(TYPE_URLS.routingPolicy, {}),
      { type_url: TYPE_URLS.cluster, value: Buffer.from([0xff, 0xff, 0xff]) },
      { type_url: "type.googleapis.com/no.Such", value: Buffer.alloc(0) },
    ]),
  );
  assert.equal(errors.length, 4);
  assert.match(errors[0] ?? "", /"default" is used twice/);
  assert.match(errors[1] ?? "", /has no name/);
  assert.match(errors[2] ?? "", /Cluster\) does not decode/);
  assert.match(errors[3] ?? "", /no\.Such\) does not decode/);
});

test("withVersion re-issues the same resources under another version", () => {
  const result = createSnapshot([routingPolicyResource("default", {})]);
  assert.ok(result.ok);
  const next = nextVersion();
  const again = withVersion(result.value, next);
  assert.equal(again.version, next);
  assert.equal(again.resources, result.value.resources);
  assert.equal(compareVersions(again.version, result.value.version), 1);
});
