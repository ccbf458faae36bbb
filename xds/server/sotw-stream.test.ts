import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import * as grpc from "@grpc/grpc-js";
import { AdsProbe, startAdsServer, type AdsTestServer } from "../../test/xds/ads-probe.ts";
import { agent, capturingLogger, snapshotOf, WARN, type LogLine } from "../../test/xds/ads-fixtures.ts";
import { SnapshotCache } from "../cache/cache.ts";
import { compareVersions } from "../cache/version.ts";
import { TYPE_URLS, unpackAny } from "../../common/control-plane/protos.ts";
import { edgeLoadAssignment, grpcCluster } from "../resources/envoy.ts";
import type { DiscoveryRequest, DiscoveryResponse } from "./messages.ts";

type Probe = AdsProbe<DiscoveryRequest, DiscoveryResponse>;

const CDS = TYPE_URLS.cluster;
const EDS = TYPE_URLS.endpoints;
const POLICY = TYPE_URLS.routingPolicy;

/** EDS clusters `names`, each with one agent. */
function clusterSet(names: readonly string[]) {
  return snapshotOf([...names.map((n) => grpcCluster(n)), ...names.map((n) => edgeLoadAssignment([agent({ agentId: `${n}-1` })], n))]);
}

function names(response: DiscoveryResponse): string[] {
  return (response.resources ?? []).map((r) => String(unpackAny(r)[r.type_url === EDS ? "cluster_name" : "name"])).sort();
}

let server: AdsTestServer;
let lines: LogLine[];
const probes: Probe[] = [];

before(async () => {
  const captured = capturingLogger();
  lines = captured.lines;
  server = await startAdsServer(captured.logger, new SnapshotCache());
});

after(async () => {
  await Promise.all(probes.map((p) => p.close()));
  await server.close();
});

function open(): Probe {
  const probe: Probe = new AdsProbe(server.address, "StreamAggregatedResources");
  probes.push(probe);
  return probe;
}

function statsBefore(): { acks: number; nacks: number } {
  return { acks: server.stats.acks, nacks: server.stats.nacks };
}

test("initial wildcard request gets every cluster with version and nonce; an ACK gets nothing resent", async () => {
  const snapshot = server.cache.setSnapshot("sotw-1", clusterSet(["a", "b"]));
  const probe = open();
  probe.send({ node: { id: "n1", cluster: "sotw-1" }, type_url: CDS });
  const first = await probe.next();
  assert.equal(first.type_url, CDS);
  assert.equal(first.version_info, snapshot.version);
  assert.notEqual(first.nonce, "");
  assert.deepEqual(names(first), ["a", "b"]);

  const counts = statsBefore();
  probe.send({ type_url: CDS, version_info: first.version_info, response_nonce: first.nonce });
  // Sentinel: a request of another type. Had the ACK triggered a resend, it would arrive first.
  probe.send({ type_url: EDS, resource_names: ["a"] });
  const next = await probe.next();
  assert.equal(next.type_url, EDS);
  assert.deepEqual(names(next), ["a"]);
  assert.equal(server.stats.acks, counts.acks + 1);
});

test("a NACK is logged with its error, the refused version is not resent, a later snapshot is", async () => {
  server.cache.setSnapshot("sotw-2", clusterSet(["a"]));
  const probe = open();
  probe.send({ node: { id: "nack-node", cluster: "sotw-2" }, type_url: CDS });
  const first = await probe.next();
  const counts = statsBefore();
  probe.send({ type_url: CDS, version_info: "", response_nonce: first.nonce, error_detail: { code: 3, message: "cluster a: unsupported lb_policy" } });
  probe.send({ type_url: POLICY, resource_names: ["default"] });
  const sentinel = await probe.next();
  assert.equal(sentinel.type_url, POLICY, "the refused version must not be sent again");
  assert.equal(server.stats.nacks, counts.nacks + 1);
  const logged = lines.find((l) => l.level === WARN && l["error"] === "cluster a: unsupported lb_policy");
  assert.ok(logged, "the NACK's error detail is logged");
  assert.equal(logged["rejected_version"], first.version_info);
  assert.equal(logged["node"], "nack-node");

  const fixed = server.cache.setSnapshot("sotw-2", clusterSet(["a", "b"]));
  const update = await probe.next();
  assert.equal(update.type_url, CDS);
  assert.equal(update.version_info, fixed.version);
  assert.deepEqual(names(update), ["a", "b"]);
});

test("a request with a stale nonce is ignored: neither its NACK nor its subscription counts", async () => {
  server.cache.setSnapshot("sotw-3", clusterSet(["a"]));
  const probe = open();
  probe.send({ node: { id: "n3", cluster: "sotw-3" }, type_url: CDS });
  const first = await probe.next();
  probe.send({ type_url: CDS, version_info: first.version_info, response_nonce: first.nonce });
  server.cache.setSnapshot("sotw-3", clusterSet(["a", "b"]));
  const second = await probe.next();
  assert.notEqual(second.nonce, first.nonce);

  const counts = statsBefore();
  probe.send({
    type_url: CDS,
    version_info: first.version_info,
    response_nonce: first.nonce,
    resource_names: ["a"],
    error_detail: { message: "late complaint" },
  });
  probe.send({ type_url: CDS, version_info: second.version_info, response_nonce: second.nonce });
  const v3 = server.cache.setSnapshot("sotw-3", clusterSet(["a", "b", "c"]));
  const third = await probe.next();
  assert.equal(third.version_info, v3.version);
  assert.deepEqual(names(third), ["a", "b", "c"], "still a wildcard subscription: the stale request's names were ignored");
  assert.equal(server.stats.nacks, counts.nacks);
  assert.equal(server.stats.acks, counts.acks + 1);
  assert.ok(!lines.some((l) => l["error"] === "late complaint"));
});

test("named subscriptions: only the named resources are sent, and a change of names is answered at once", async () => {
  const snapshot = server.cache.setSnapshot("sotw-4", clusterSet(["a", "b", "c"]));
  const probe = open();
  probe.send({ node: { id: "n4", cluster: "sotw-4" }, type_url: EDS, resource_names: ["a", "missing"] });
  const first = await probe.next();
  assert.deepEqual(names(first), ["a"]);
  probe.send({ type_url: EDS, version_info: first.version_info, response_nonce: first.nonce, resource_names: ["a", "c"] });
  const second = await probe.next();
  assert.equal(second.version_info, snapshot.version);
  assert.deepEqual(names(second), ["a", "c"]);
  probe.send({ type_url: EDS, version_info: second.version_info, response_nonce: second.nonce, resource_names: [] });
  const third = await probe.next();
  assert.deepEqual(names(third), [], "after named subscriptions, an empty list means nothing, not the wildcard");
});

test("a snapshot that changes only endpoints sends endpoints, not the unchanged clusters", async () => {
  server.cache.setSnapshot("sotw-9", snapshotOf([grpcCluster("a"), edgeLoadAssignment([agent({ agentId: "a-1" })], "a")]));
  const probe = open();
  probe.send({ node: { id: "n9", cluster: "sotw-9" }, type_url: CDS });
  const clusters = await probe.next();
  probe.send({ type_url: CDS, version_info: clusters.version_info, response_nonce: clusters.nonce });
  probe.send({ type_url: EDS, resource_names: ["a"] });
  const endpoints = await probe.next();
  probe.send({ type_url: EDS, version_info: endpoints.version_info, response_nonce: endpoints.nonce, resource_names: ["a"] });

  const busier = server.cache.setSnapshot("sotw-9", snapshotOf([grpcCluster("a"), edgeLoadAssignment([agent({ agentId: "a-1", inFlight: 3 })], "a")]));
  const update = await probe.next();
  assert.deepEqual([update.type_url, update.version_info], [EDS, busier.version]);
  probe.send({ type_url: POLICY, resource_names: ["default"] });
  assert.equal((await probe.next()).type_url, POLICY, "no cluster response came in between");
});

test("two node groups get their own snapshots; a group without one gets the default's until it has one", async () => {
  const defaultSnapshot = server.cache.setSnapshot("default", clusterSet(["d"]));
  const own = server.cache.setSnapshot("sotw-5", clusterSet(["x"]));
  const a = open();
  const b = open();
  a.send({ node: { id: "a", cluster: "sotw-5" }, type_url: CDS });
  b.send({ node: { id: "b", cluster: "sotw-5-late" }, type_url: CDS });
  const fromA = await a.next();
  const fromB = await b.next();
  assert.deepEqual([fromA.version_info, names(fromA)], [own.version, ["x"]]);
  assert.deepEqual([fromB.version_info, names(fromB)], [defaultSnapshot.version, ["d"]]);

  b.send({ type_url: CDS, version_info: fromB.version_info, response_nonce: fromB.nonce });
  const late = server.cache.setSnapshot("sotw-5-late", clusterSet(["late"]));
  const moved = await b.next();
  assert.deepEqual([moved.version_info, names(moved)], [late.version, ["late"]]);
  assert.equal(a.pending(), 0);
});

test("a client reporting a version newer than the snapshot gets the current resources under a higher version, and a warning is logged", async () => {
  const snapshot = server.cache.setSnapshot("sotw-6", clusterSet(["a"]));
  const reported = "999999999999999-000001";
  const probe = open();
  probe.send({ node: { id: "n6", cluster: "sotw-6" }, type_url: CDS, version_info: reported });
  const response = await probe.next();
  const version = response.version_info ?? "";
  assert.deepEqual(names(response), ["a"]);
  assert.ok((compareVersions(version, reported) ?? 0) > 0, `${version} > ${reported}`);
  assert.ok((compareVersions(version, snapshot.version) ?? 0) > 0);
  assert.ok(lines.some((l) => l.level === WARN && l["client_version"] === reported));
});

test("a stream never sees its version go backwards when its group gets a snapshot older than the default it had", async () => {
  const older = clusterSet(["own"]);
  const fallback = server.cache.setSnapshot("default", clusterSet(["d"]));
  const probe = open();
  probe.send({ node: { id: "n10", cluster: "sotw-10" }, type_url: CDS });
  const first = await probe.next();
  assert.equal(first.version_info, fallback.version);
  probe.send({ type_url: CDS, version_info: first.version_info, response_nonce: first.nonce });
  server.cache.setSnapshot("sotw-10", older);
  const moved = await probe.next();
  assert.deepEqual(names(moved), ["own"]);
  assert.ok((compareVersions(moved.version_info ?? "", fallback.version) ?? 0) > 0, `${moved.version_info} > ${fallback.version}`);
});

test("a wildcard client resuming with the current version gets nothing until the next change", async () => {
  const snapshot = server.cache.setSnapshot("sotw-7", clusterSet(["a"]));
  const probe = open();
  probe.send({ node: { id: "n7", cluster: "sotw-7" }, type_url: CDS, version_info: snapshot.version });
  probe.send({ type_url: EDS, resource_names: ["a"] });
  const sentinel = await probe.next();
  assert.equal(sentinel.type_url, EDS);
  const next = server.cache.setSnapshot("sotw-7", clusterSet(["a", "b"]));
  const update = await probe.next();
  assert.deepEqual([update.type_url, update.version_info], [CDS, next.version]);
});

test("a request without type_url ends the stream with INVALID_ARGUMENT", async () => {
  server.cache.setSnapshot("sotw-8", clusterSet(["a"]));
  const probe = open();
  probe.send({ node: { id: "n8", cluster: "sotw-8" } });
  await assert.rejects(probe.next(), (err: grpc.ServiceError) => err.code === grpc.status.INVALID_ARGUMENT);
});

test("closing streams frees their watches and counts", async () => {
  const cache = new SnapshotCache();
  const own = await startAdsServer(capturingLogger().logger, cache);
  cache.setSnapshot("default", clusterSet(["a"]));
  const one: Probe = new AdsProbe(own.address, "StreamAggregatedResources");
  one.send({ node: { id: "x" }, type_url: CDS });
  await one.next();
  assert.equal(own.stats.openStreams, 1);
  assert.equal(cache.watchCount(), 1);
  await one.close();
  for (let i = 0; i < 200 && own.stats.openStreams > 0; i++) await sleep(10);
  assert.equal(own.stats.openStreams, 0);
  assert.equal(cache.watchCount(), 0);
  await own.close();
});
