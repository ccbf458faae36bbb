/**
 * The edge cluster in the rendered mesh install: added by the gearbox-ext-proc EnvoyFilter under
 * the name Istio gives the edge route's destination, with no ServiceEntry opening port 8088 in
 * every sidecar; each check shown failing on the manifests before the fix (gearbox-edge
 * ServiceEntry, resolution NONE, and a CLUSTER MERGE onto Istio's cluster).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { EDGE_HOST, edgeClusterErrors, wildcardListenerErrors } from "./edge-cluster.ts";
import { parseEnvoyFilterPatches } from "./envoy-patches.ts";
import { arr, KUSTOMIZATIONS, obj, ofKind, renderKustomize, type Manifest } from "./manifests.ts";

const rendered = new Map(KUSTOMIZATIONS.map((dir) => [dir, renderKustomize(dir)]));
const base = (): Manifest[] => structuredClone(rendered.get("istio/base") ?? assert.fail("no base"));
const patchesOf = (docs: readonly Manifest[]): Record<string, unknown>[] =>
  arr(obj(ofKind(docs, "EnvoyFilter", "gearbox-ext-proc")[0]?.["spec"])["configPatches"]).map(obj);
const isEdgeAdd = (p: Record<string, unknown>): boolean => p["applyTo"] === "CLUSTER" && obj(p["patch"])["operation"] === "ADD";

for (const [dir, docs] of rendered) {
  void describe(dir, () => {
    void it("no ServiceEntry opens a wildcard listener, and the edge route's cluster is the one the EnvoyFilter adds", () => {
      assert.deepEqual(wildcardListenerErrors(docs), []);
      assert.deepEqual(edgeClusterErrors(docs), []);
      const context = dir.endsWith("egress-gateway") ? "GATEWAY" : "SIDECAR_OUTBOUND";
      const adds = patchesOf(docs).filter(isEdgeAdd);
      assert.equal(adds.length, 1);
      assert.deepEqual(obj(adds[0]?.["match"]), { context }, "ADD ignores every match field but the context");
    });
  });
}

/** The base as it was: the gearbox-edge ServiceEntry (and its DestinationRule), and a MERGE onto Istio's cluster instead of the ADD. */
function previous(): Manifest[] {
  const docs = base();
  const meta = { namespace: "gearbox", labels: { "app.kubernetes.io/part-of": "gearbox" } };
  docs.push(
    {
      apiVersion: "networking.istio.io/v1beta1",
      kind: "ServiceEntry",
      metadata: { name: "gearbox-edge", ...meta },
      spec: { hosts: [EDGE_HOST], location: "MESH_EXTERNAL", resolution: "NONE", ports: [{ number: 8088, name: "http-edge", protocol: "HTTP" }] },
    },
    {
      apiVersion: "networking.istio.io/v1beta1",
      kind: "DestinationRule",
      metadata: { name: "gearbox-edge", ...meta },
      spec: { host: EDGE_HOST, trafficPolicy: { tls: { mode: "DISABLE" }, connectionPool: { tcp: { connectTimeout: "1s" } } } },
    },
  );
  const edge = patchesOf(docs).find(isEdgeAdd) ?? assert.fail("no CLUSTER ADD");
  const value = obj(obj(edge["patch"])["value"]);
  edge["match"] = { context: "SIDECAR_OUTBOUND", cluster: { service: EDGE_HOST, portNumber: 8088 } };
  edge["patch"] = { operation: "MERGE", value: { connect_timeout: value["connect_timeout"], original_dst_lb_config: value["original_dst_lb_config"] } };
  return docs;
}

void describe("the checks fail on the previous manifests", () => {
  void it("the gearbox-edge ServiceEntry opens 0.0.0.0_8088 in every sidecar", () => {
    assert.deepEqual(wildcardListenerErrors(previous()), [
      "ServiceEntry gearbox/gearbox-edge: resolution NONE without addresses: every sidecar gets a 0.0.0.0_8088 listener catching all traffic to port 8088",
    ]);
  });

  void it("an HTTP port other than 80, or a TCP port, on an entry without addresses", () => {
    const docs = base();
    const se = ofKind(docs, "ServiceEntry", "gearbox-provider-openai")[0] ?? assert.fail("no entry");
    obj(se["spec"])["ports"] = [
      { number: 8088, name: "http-edge", protocol: "HTTP" },
      { number: 6379, name: "tcp-redis", protocol: "TCP" },
    ];
    assert.deepEqual(wildcardListenerErrors(docs), [
      "ServiceEntry gearbox/gearbox-provider-openai: HTTP port 8088 without addresses: port 8088 becomes HTTP in every sidecar (0.0.0.0_8088)",
      "ServiceEntry gearbox/gearbox-provider-openai: TCP port 6379 without addresses: every sidecar sends all port-6379 traffic to this entry (0.0.0.0_6379)",
    ]);
  });

  void it("the edge cluster built from a ServiceEntry and only merged, not added", () => {
    const errors = edgeClusterErrors(previous());
    assert.equal(errors.length, 4, errors.join("\n"));
    assert.match(errors[0] ?? "", /ServiceEntry gearbox\/gearbox-edge: declares gearbox-edge\.gearbox\.internal/);
    for (const e of errors.slice(1))
      assert.match(
        e,
        /gearbox-to-edge\) → gearbox-edge\.gearbox\.internal: Istio names its cluster outbound\|8088\|\|gearbox-edge\.gearbox\.internal, and no EnvoyFilter adds it in SIDECAR_OUTBOUND/,
      );
  });

  void it("an ADD under another name, in another context, twice, or without a port on the route", () => {
    const renamed = base();
    obj(obj(patchesOf(renamed).find(isEdgeAdd)?.["patch"])["value"])["name"] = "outbound|8088||gearbox-edge";
    assert.equal(edgeClusterErrors(renamed).filter((e) => e.includes("no EnvoyFilter adds it")).length, 3);
    const atGateway = base();
    obj(patchesOf(atGateway).find(isEdgeAdd)?.["match"])["context"] = "GATEWAY";
    assert.equal(edgeClusterErrors(atGateway).filter((e) => e.includes("in SIDECAR_OUTBOUND")).length, 3);
    const twice = base();
    const filter = obj(ofKind(twice, "EnvoyFilter", "gearbox-ext-proc")[0]?.["spec"]);
    filter["configPatches"] = [...arr(filter["configPatches"]), structuredClone(patchesOf(twice).find(isEdgeAdd))];
    assert.equal(edgeClusterErrors(twice).filter((e) => e.includes("is added 2 times")).length, 3);
    const portless = base();
    const vs = ofKind(portless, "VirtualService", "gearbox-provider-openai")[0] ?? assert.fail("no VirtualService");
    const edge = arr(obj(vs["spec"])["http"])
      .map(obj)
      .find((r) => r["name"] === "gearbox-to-edge");
    delete obj(obj(arr(edge?.["route"])[0])["destination"])["port"];
    assert.match(edgeClusterErrors(portless).join("\n"), /gearbox-provider-openai: .*\(gearbox-to-edge\) → gearbox-edge\.gearbox\.internal: no port/);
  });

  void it("an edge cluster on a header, or not ORIGINAL_DST, and an ADD value that does not parse", () => {
    const header = base();
    const value = obj(obj(patchesOf(header).find(isEdgeAdd)?.["patch"])["value"]);
    value["original_dst_lb_config"] = { use_http_header: true };
    value["type"] = "STRICT_DNS";
    const errors = edgeClusterErrors(header).join("\n");
    assert.match(errors, /must be ORIGINAL_DST with lb_policy CLUSTER_PROVIDED/);
    assert.match(errors, /must take its destination from metadata gearbox\.edge\/endpoint/);
    assert.match(errors, /reads a header any caller can send/);
    const broken = base();
    const v = obj(obj(patchesOf(broken).find(isEdgeAdd)?.["patch"])["value"]);
    v["conect_timeout"] = "1s";
    v["lb_policy"] = "NEAREST";
    const [filter] = ofKind(broken, "EnvoyFilter", "gearbox-ext-proc");
    const parsed = parseEnvoyFilterPatches(filter ?? assert.fail("no filter")).find((p) => p.applyTo === "CLUSTER");
    assert.match(parsed?.errors.join("\n") ?? "", /\(CLUSTER ADD\): conect_timeout: unknown field "conect_timeout"/);
    assert.match(parsed?.errors.join("\n") ?? "", /lb_policy/);
    assert.match(edgeClusterErrors(broken).join("\n"), /conect_timeout/);
  });
});
