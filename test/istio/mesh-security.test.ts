/**
 * What the rendered mesh install must hold for who-is-calling and for where edge calls go, which
 * only a cluster would otherwise show (issue 16, items 3, 5, 9):
 * - the caller's SPIFFE ID in the sidecar variant comes from XFCC, so Gearbox trusts it only
 *   where the ext_proc port is mTLS-only;
 * - Gearbox's own calls to edge agents (`http://<node IP>:8088`) bypass the ext_proc pod's
 *   sidecar, where REGISTRY_ONLY would black-hole them.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { advertiseAddressOf } from "../../edge-agent/advertise.ts";
import { parseConfigText } from "../../extproc/config/load.ts";
import { addressError } from "../../common/registry/hello.ts";
import { arr, KUSTOMIZATIONS, obj, ofKind, renderKustomize, type Manifest } from "./manifests.ts";

const podTemplate = (workload: Manifest) => obj(obj(workload["spec"])["template"]);
const matches = (selector: Record<string, unknown>, labels: Record<string, unknown>): boolean => Object.entries(selector).every(([k, v]) => labels[k] === v);

for (const dir of KUSTOMIZATIONS) {
  void describe(`kubectl kustomize ${dir}: mesh security`, () => {
    const docs = renderKustomize(dir);
    const extproc = ofKind(docs, "Deployment", "gearbox-extproc")[0] ?? assert.fail("Deployment gearbox-extproc");
    const labels = obj(obj(podTemplate(extproc)["metadata"])["labels"]);

    void it("Gearbox trusts XFCC, and only on an mTLS-only ext_proc port", () => {
      const [configMap] = ofKind(docs, "ConfigMap", "gearbox-config");
      const raw = parseConfigText(String(obj(configMap?.["data"])["gearbox.yaml"]), "gearbox.yaml");
      assert.ok(raw.ok);
      assert.equal(raw.value.extproc.trust_xfcc, true, "sidecars report no peer URI SAN: workload identity needs XFCC");
      const service = ofKind(docs, "Service", "gearbox-extproc")[0] ?? assert.fail("Service gearbox-extproc");
      const grpcPort = arr(obj(service["spec"])["ports"])
        .map(obj)
        .find((p) => p["appProtocol"] === "grpc");
      const container = obj(arr(obj(podTemplate(extproc)["spec"])["containers"])[0]);
      const containerPort = arr(container["ports"])
        .map(obj)
        .find((p) => p["name"] === grpcPort?.["targetPort"])?.["containerPort"];
      assert.equal(typeof containerPort, "number");
      const strict = ofKind(docs, "PeerAuthentication").filter((pa) => {
        const spec = obj(pa["spec"]);
        const mode = obj(obj(spec["portLevelMtls"])[String(containerPort)])["mode"] ?? obj(spec["mtls"])["mode"];
        return pa.metadata.namespace === extproc.metadata.namespace && mode === "STRICT" && matches(obj(obj(spec["selector"])["matchLabels"]), labels);
      });
      assert.equal(strict.length, 1, `a STRICT PeerAuthentication on the ext_proc pods' port ${String(containerPort)}`);
    });

    void it("Gearbox's own calls to edge agents bypass its sidecar (REGISTRY_ONLY would black-hole them)", () => {
      const agentPorts = ofKind(docs, "DaemonSet").map((ds) => obj(arr(obj(arr(obj(podTemplate(ds)["spec"])["containers"])[0])["ports"])[0])["hostPort"]);
      assert.ok(agentPorts.length > 0);
      const annotations = obj(obj(podTemplate(extproc)["metadata"])["annotations"]);
      const list = annotations["traffic.sidecar.istio.io/excludeOutboundPorts"];
      const excluded = (typeof list === "string" ? list : "").split(",").map((p) => Number(p.trim()));
      for (const port of new Set(agentPorts)) assert.ok(excluded.includes(Number(port)), `outbound port ${String(port)} excluded from interception`);
    });

    void it("edge agents advertise an address Envoy can dial on IPv4 and IPv6 nodes", () => {
      for (const ds of ofKind(docs, "DaemonSet")) {
        const container = obj(arr(obj(podTemplate(ds)["spec"])["containers"])[0]);
        const port = Number(obj(arr(container["ports"])[0])["containerPort"]);
        const env = arr(container["env"])
          .map(obj)
          .find((e) => e["name"] === "GEARBOX_EDGE_ADVERTISE");
        assert.equal(typeof env?.["value"], "string", `${ds.metadata.name}: GEARBOX_EDGE_ADVERTISE`);
        for (const hostIp of ["10.0.3.7", "2001:db8::7"]) {
          const given = String(env?.["value"])
            .replace(/\s*#.*$/, "")
            .replaceAll("$(HOST_IP)", hostIp);
          assert.equal(addressError(advertiseAddressOf(given, port)), undefined, `${ds.metadata.name} on a node ${hostIp}`);
        }
      }
    });
  });
}
