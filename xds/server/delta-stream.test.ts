import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { AdsProbe, startAdsServer, type AdsTestServer } from "../../test/xds/ads-probe.ts";
import { agent, capturingLogger, snapshotOf, WARN, type LogLine } from "../../test/xds/ads-fixtures.ts";
import type { Snapshot } from "../cache/snapshot.ts";
import { TYPE_URLS } from "../../common/control-plane/protos.ts";
import { edgeLoadAssignment, grpcCluster } from "../resources/envoy.ts";
import { routingPolicyResource } from "../resources/gearbox.ts";
import type { DeltaDiscoveryRequest, DeltaDiscoveryResponse } from "./messages.ts";

type Probe = AdsProbe<DeltaDiscoveryRequest, DeltaDiscoveryResponse>;

const CDS = TYPE_URLS.cluster;
const EDS = TYPE_URLS.endpoints;
const POLICY = TYPE_URLS.routingPolicy;

/** EDS clusters `names`, each with one agent whose in-flight count is `load[name]` (0 if absent). */
function clusterSet(names: readonly string[], load: Record<string, number> = {}): Snapshot {
  return snapshotOf([
    ...names.map((n) => grpcCluster(n)),
    ...names.map((n) => edgeLoadAssignment([agent({ agentId: `${n}-1`, inFlight: load[n] ?? 0 })], n)),
    routingPolicyResource("default", { rules: [] }),
  ]);
}

function sent(response: DeltaDiscoveryResponse): string[] {
  return (response.resources ?? []).map((r) => r.name).sort();
}

function removed(response: DeltaDiscoveryResponse): string[] {
  return [...(response.removed_resources ?? [])].sort();
}

let server: AdsTestServer;
let lines: LogLine[];
const probes: Probe[] = [];

before(async () => {
  const captured = capturingLogger();
  lines = captured.lines;
  server = await startAdsServer(captured.logger);
});

after(async () => {
  await Promise.all(probes.map((p) => p.close()));
  await server.close();
});

function open(): Probe {
  const probe: Probe = new AdsProbe(server.address, "DeltaAggregatedResources");
  probes.push(probe);
  return probe;
}

/** Sends a request of another type and returns its response: whatever was due before it arrived first. */
async function sentinel(probe: Probe): Promise<DeltaDiscoveryResponse> {
  probe.send({ type_url: POLICY, resource_names_subscribe: ["default"] });
  return probe.next();
}

test("wildcard subscription: every resource with its own version; an ACK gets nothing resent", async () => {
  const snapshot = server.cache.setSnapshot("delta-1", clusterSet(["a", "b"]));
  const probe = open();
  probe.send({ node: { id: "d1", cluster: "delta-1" }, type_url: CDS });
  const first = await probe.next();
  assert.equal(first.type_url, CDS);
  assert.equal(first.system_version_info, snapshot.version);
  assert.notEqual(first.nonce, "");
  assert.deepEqual(sent(first), ["a", "b"]);
  for (const r of first.resources ?? []) assert.equal(r.version, snapshot.resourceVersions.get(CDS)?.get(r.name));

  const acks = server.stats.acks;
  probe.send({ type_url: CDS, response_nonce: first.nonce });
  const next = await sentinel(probe);
  assert.equal(next.type_url, POLICY);
  assert.equal(server.stats.acks, acks + 1);
});

test("a resource gone from the snapshot is sent in removed_resources; unchanged ones are not resent", async () => {
  server.cache.setSnapshot("delta-2", clusterSet(["a", "b"]));
  const probe = open();
  probe.send({ node: { id: "d2", cluster: "delta-2" }, type_url: CDS });
  const first = await probe.next();
  probe.send({ type_url: CDS, response_nonce: first.nonce });
  const v2 = server.cache.setSnapshot("delta-2", clusterSet(["a", "c"]));
  const update = await probe.next();
  assert.equal(update.system_version_info, v2.version);
  assert.deepEqual(sent(update), ["c"]);
  assert.deepEqual(removed(update), ["b"]);
});

test("named subscribe and unsubscribe: a missing name is reported removed, an unsubscribed one is no longer sent", async () => {
  server.cache.setSnapshot("delta-3", clusterSet(["a", "b", "c"]));
  const probe = open();
  probe.send({ node: { id: "d3", cluster: "delta-3" }, type_url: EDS, resource_names_subscribe: ["a"] });
  const first = await probe.next();
  assert.deepEqual([sent(first), removed(first)], [["a"], []]);
  probe.send({ type_url: EDS, response_nonce: first.nonce, resource_names_subscribe: ["missing"] });
  const missing = await probe.next();
  assert.deepEqual([sent(missing), removed(missing)], [[], ["missing"]]);
  probe.send({ type_url: EDS, response_nonce: missing.nonce });
  server.cache.setSnapshot("delta-3", clusterSet(["a", "b", "c"], { a: 1 }));
  const changed = await probe.next();
  assert.deepEqual([sent(changed), removed(changed)], [["a"], []], "a missing resource is reported once");
  probe.send({ type_url: EDS, response_nonce: changed.nonce, resource_names_unsubscribe: ["a", "missing"] });

  // Endpoints of a and b change; only b is subscribed now.
  server.cache.setSnapshot("delta-3", clusterSet(["a", "b", "c"], { a: 5, b: 5 }));
  probe.send({ type_url: EDS, resource_names_subscribe: ["b"] });
  const update = await probe.next();
  assert.equal(update.type_url, EDS);
  assert.deepEqual([sent(update), removed(update)], [["b"], []]);
});

test("subscribing again to a resource the client had always sends it", async () => {
  server.cache.setSnapshot("delta-4", clusterSet(["a"]));
  const probe = open();
  probe.send({ node: { id: "d4", cluster: "delta-4" }, type_url: EDS, resource_names_subscribe: ["a"] });
  const first = await probe.next();
  probe.send({ type_url: EDS, response_nonce: first.nonce, resource_names_unsubscribe: ["a"] });
  probe.send({ type_url: EDS, resource_names_subscribe: ["a"] });
  const again = await probe.next();
  assert.deepEqual(sent(again), ["a"]);
});

test("a client reconnecting with initial_resource_versions equal to the snapshot gets nothing; a stale one gets that resource only", async () => {
  const snapshot = server.cache.setSnapshot("delta-5", clusterSet(["a", "b"]));
  const versions = Object.fromEntries(snapshot.resourceVersions.get(CDS) ?? []);
  const current = open();
  current.send({ node: { id: "d5", cluster: "delta-5" }, type_url: CDS, initial_resource_versions: versions });
  assert.equal((await sentinel(current)).type_url, POLICY);

  const stale = open();
  stale.send({ node: { id: "d5b", cluster: "delta-5" }, type_url: CDS, initial_resource_versions: { ...versions, b: "old", gone: "old" } });
  const update = await stale.next();
  assert.deepEqual([sent(update), removed(update)], [["b"], ["gone"]]);
});

test("a NACK is logged and what it refused is not resent; a later change of that resource is sent", async () => {
  server.cache.setSnapshot("delta-6", clusterSet(["a"]));
  const probe = open();
  probe.send({ node: { id: "d6", cluster: "delta-6" }, type_url: EDS, resource_names_subscribe: ["a"] });
  const first = await probe.next();
  const nacks = server.stats.nacks;
  probe.send({ type_url: EDS, response_nonce: first.nonce, error_detail: { code: 3, message: "endpoint a: bad address" } });
  assert.equal((await sentinel(probe)).type_url, POLICY);
  assert.equal(server.stats.nacks, nacks + 1);
  assert.ok(lines.some((l) => l.level === WARN && l["error"] === "endpoint a: bad address" && l["node"] === "d6"));

  server.cache.setSnapshot("delta-6", clusterSet(["a"], { a: 3 }));
  const update = await probe.next();
  assert.deepEqual([update.type_url, sent(update)], [EDS, ["a"]]);
});

test("an ACK or NACK with a stale nonce is ignored", async () => {
  server.cache.setSnapshot("delta-7", clusterSet(["a"]));
  const probe = open();
  probe.send({ node: { id: "d7", cluster: "delta-7" }, type_url: CDS });
  const first = await probe.next();
  probe.send({ type_url: CDS, response_nonce: first.nonce });
  server.cache.setSnapshot("delta-7", clusterSet(["a", "b"]));
  const second = await probe.next();
  const { acks, nacks } = server.stats;
  probe.send({ type_url: CDS, response_nonce: first.nonce, error_detail: { message: "stale complaint" } });
  probe.send({ type_url: CDS, response_nonce: first.nonce });
  // Still waiting for the answer to `second`: a new snapshot is held back until it comes.
  server.cache.setSnapshot("delta-7", clusterSet(["a", "b", "c"]));
  assert.equal((await sentinel(probe)).type_url, POLICY);
  assert.deepEqual([server.stats.acks, server.stats.nacks], [acks, nacks]);
  assert.ok(!lines.some((l) => l["error"] === "stale complaint"));
  probe.send({ type_url: CDS, response_nonce: second.nonce });
  const third = await probe.next();
  assert.deepEqual(sent(third), ["c"]);
});
