/**
 * The mesh install as Kustomize renders it (`kubectl kustomize`, every run; no cluster here):
 * every document of every overlay validates against its typed model, every EnvoyFilter patch
 * parses into Envoy's proto types, and the pieces agree with each other, with Gearbox's config
 * schema, with the edge agent's flags and with envoy/sidecar.yaml.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { EDGE_AGENT_USAGE } from "../../edge-agent/main.ts";
import { parseConfigText, resolveConfig } from "../../extproc/config/load.ts";
import { parseBootstrap, readEnvoyYaml } from "../envoy/load-config.ts";
import { arrayAtPath, type PlainObject } from "../envoy/plain.ts";
import { toPlainObject } from "../envoy/proto-json.ts";
import { EDGE_HOST } from "./edge-cluster.ts";
import { parseEnvoyFilterPatches, type ParsedPatch } from "./envoy-patches.ts";
import { arr, KUSTOMIZATIONS, obj, ofKind, renderKustomize, validateManifest, type Manifest } from "./manifests.ts";

const EXT_PROC = "envoy.filters.http.ext_proc";
const EDGE_HEADER = "x-gearbox-edge-endpoint";
const rendered = new Map<string, Manifest[]>(KUSTOMIZATIONS.map((dir) => [dir, renderKustomize(dir)]));
const docsOf = (dir: string): Manifest[] => rendered.get(dir) ?? assert.fail(`${dir} not rendered`);
const base = docsOf("istio/base");

/** envoy/sidecar.yaml's ext_proc filter config, in plain proto form. */
function sidecarExtProc(): PlainObject {
  const result = parseBootstrap(readEnvoyYaml("sidecar.yaml"));
  assert.ok(result.ok, "envoy/sidecar.yaml parses");
  const plain = toPlainObject(result.type, result.message);
  const filters = arrayAtPath(plain, "static_resources.listeners[0].filter_chains[0].filters[0].typed_config.http_filters").map(obj);
  return obj(filters.find((f) => f["name"] === EXT_PROC)?.["typed_config"]);
}

/** envoy/sidecar.yaml's edge cluster, in plain proto form. */
function sidecarEdgeCluster(): PlainObject {
  const result = parseBootstrap(readEnvoyYaml("sidecar.yaml"));
  assert.ok(result.ok, "envoy/sidecar.yaml parses");
  const plain = toPlainObject(result.type, result.message);
  return obj(
    arrayAtPath(plain, "static_resources.clusters")
      .map(obj)
      .find((c) => c["name"] === "edge"),
  );
}

function extProcPatch(patches: readonly ParsedPatch[]): PlainObject {
  const filter = patches.find((p) => p.applyTo === "HTTP_FILTER" && p.plain?.["name"] === EXT_PROC);
  assert.ok(filter?.plain, "an HTTP_FILTER patch inserting ext_proc");
  return filter.plain;
}

/** Provider name → host, from the ServiceEntries labelled gearbox.dev/provider. */
function providers(docs: readonly Manifest[]): Map<string, string> {
  return new Map(
    ofKind(docs, "ServiceEntry")
      .filter((se) => se.metadata.labels?.["gearbox.dev/provider"])
      .map((se) => [String(se.metadata.labels?.["gearbox.dev/provider"]), String(arr(obj(se["spec"])["hosts"])[0])]),
  );
}

const podSpec = (workload: Manifest): PlainObject => obj(obj(obj(workload["spec"])["template"])["spec"]);
const podLabels = (workload: Manifest): PlainObject => obj(obj(obj(obj(workload["spec"])["template"])["metadata"])["labels"]);
const matches = (selector: PlainObject, labels: PlainObject): boolean => Object.entries(selector).every(([k, v]) => labels[k] === v);

for (const dir of KUSTOMIZATIONS) {
  void describe(`kubectl kustomize ${dir}`, () => {
    const docs = docsOf(dir);

    void it("renders, and every document validates against its typed model (unknown Istio fields rejected)", () => {
      assert.ok(docs.length >= 20, `only ${docs.length} documents`);
      assert.deepEqual(docs.flatMap(validateManifest), []);
      const names = docs.map((d) => `${d.kind}/${d.metadata.namespace ?? ""}/${d.metadata.name}`);
      assert.deepEqual(
        names.filter((n, i) => names.indexOf(n) !== i),
        [],
        "duplicate resources",
      );
    });

    void it("every EnvoyFilter patch value parses strictly into its Envoy proto type", () => {
      const filters = ofKind(docs, "EnvoyFilter");
      const https = dir.endsWith("https-intercept") ? ["gearbox-https-intercept"] : [];
      assert.deepEqual(filters.map((f) => f.metadata.name).sort(), ["gearbox-ext-proc", ...https, "gearbox-strip-routing-headers"]);
      for (const filter of filters) {
        const patches = parseEnvoyFilterPatches(filter);
        assert.ok(patches.length >= (filter.metadata.name === "gearbox-ext-proc" ? 5 : 1));
        assert.deepEqual(
          patches.flatMap((p) => p.errors),
          [],
        );
      }
    });

    void it("ext_proc is configured as in envoy/sidecar.yaml and talks to the gearbox-extproc Service", () => {
      const [filter] = ofKind(docs, "EnvoyFilter", "gearbox-ext-proc");
      assert.ok(filter);
      const inserted = extProcPatch(parseEnvoyFilterPatches(filter));
      assert.equal(inserted["disabled"], true, "inserted disabled, enabled per provider virtual host");
      const config = { ...obj(inserted["typed_config"]) };
      const cluster = String(obj(obj(config["grpc_service"])["envoy_grpc"])["cluster_name"]);
      const [, port, host] = /^outbound\|(\d+)\|\|([^.]+)\.([^.]+)\.svc\.cluster\.local$/.exec(cluster) ?? [];
      const svc = ofKind(docs, "Service", host)[0];
      assert.ok(svc, `Service ${host} for ${cluster}`);
      const svcPort = arr(obj(svc["spec"])["ports"])
        .map(obj)
        .find((p) => String(p["port"]) === port);
      assert.equal(svcPort?.["appProtocol"], "grpc", "Istio must speak HTTP/2 to ext_proc");
      const expected = { ...sidecarExtProc() };
      delete config["grpc_service"];
      delete expected["grpc_service"];
      if (dir.endsWith("shadow")) {
        assert.equal(config["observability_mode"], true);
        assert.equal(config["failure_mode_allow"], true, "shadow fails open (mesh-rules.ts)");
        config["failure_mode_allow"] = expected["failure_mode_allow"];
        assert.deepEqual([obj(config["processing_mode"])["request_body_mode"], obj(config["processing_mode"])["response_body_mode"]], ["STREAMED", "STREAMED"]);
        config["processing_mode"] = expected["processing_mode"];
      } else {
        assert.notEqual(config["observability_mode"], true, "live mode waits for Gearbox");
      }
      delete config["observability_mode"];
      assert.deepEqual(config, expected);
    });

    void it("ext_proc is switched on for exactly the provider hosts, and the edge cluster follows the edge metadata", () => {
      const [filter] = ofKind(docs, "EnvoyFilter", "gearbox-ext-proc");
      assert.ok(filter);
      const patches = parseEnvoyFilterPatches(filter);
      const gateway = dir.endsWith("egress-gateway");
      const vhostPort = gateway ? 443 : 80;
      const enabled = patches
        .filter(
          (p) =>
            p.applyTo === "VIRTUAL_HOST" &&
            obj(obj(p.plain?.["typed_per_filter_config"])[EXT_PROC])["disabled"] !== true &&
            EXT_PROC in obj(p.plain?.["typed_per_filter_config"]),
        )
        .map((p) => String(p.plain?.["name"]));
      assert.deepEqual(enabled.sort(), [...providers(docs).values()].map((h) => `${h}:${vhostPort}`).sort());
      for (const p of patches) assert.equal(p.match["context"], gateway ? "GATEWAY" : "SIDECAR_OUTBOUND", p.where);
      // Added, not built from a ServiceEntry (edge-cluster.ts: no entry opens port 8088 mesh-wide).
      const edge = patches.find((p) => p.applyTo === "CLUSTER");
      assert.ok(edge?.plain);
      assert.equal(edge.operation, "ADD");
      assert.equal(edge.plain["name"], `outbound|8088||${EDGE_HOST}`);
      assert.deepEqual(
        ofKind(docs, "ServiceEntry").filter((se) => arr(obj(se["spec"])["hosts"]).includes(EDGE_HOST)),
        [],
      );
      const pick = (c: PlainObject): PlainObject =>
        Object.fromEntries(["type", "lb_policy", "connect_timeout", "original_dst_lb_config"].map((k) => [k, c[k]]));
      assert.deepEqual(pick(edge.plain), pick(sidecarEdgeCluster()), "as envoy/sidecar.yaml's edge cluster");
      assert.equal(edge.plain["type"], "ORIGINAL_DST");
    });

    void it("retries to every provider back off with jitter and honour a 429's retry-after", () => {
      const [filter] = ofKind(docs, "EnvoyFilter", "gearbox-ext-proc");
      assert.ok(filter);
      const routes = parseEnvoyFilterPatches(filter).filter((p) => p.applyTo === "HTTP_ROUTE");
      for (const name of providers(docs).keys()) {
        const patch = routes.find((p) => obj(obj(obj(p.match["routeConfiguration"])["vhost"])["route"])["name"] === `gearbox-to-${name}`);
        assert.ok(patch?.plain, `no HTTP_ROUTE patch for gearbox-to-${name}`);
        const policy = obj(obj(patch.plain["route"])["retry_policy"]);
        assert.ok(obj(policy["retry_back_off"])["base_interval"], `gearbox-to-${name}: retry_back_off`);
        const resets = arr(obj(policy["rate_limited_retry_back_off"])["reset_headers"]).map(obj);
        assert.deepEqual(resets, [{ name: "retry-after", format: "SECONDS" }], `gearbox-to-${name}: retry-after`);
      }
    });

    void it("every provider Gearbox is configured with has a route on every provider host, with TLS origination", () => {
      const [configMap] = ofKind(docs, "ConfigMap", "gearbox-config");
      assert.ok(configMap);
      const raw = parseConfigText(String(obj(configMap["data"])["gearbox.yaml"]), "gearbox-config/gearbox.yaml");
      assert.ok(raw.ok, raw.ok ? "" : raw.errors.join("\n"));
      const config = resolveConfig(raw.value, {}, null);
      assert.ok(config.ok, config.ok ? "" : config.errors.join("\n"));
      const hosts = providers(docs);
      assert.deepEqual(config.value.providers.map((p) => p.name).sort(), [...hosts.keys()].sort(), "providers in gearbox.yaml = provider ServiceEntries");
      for (const [name, host] of hosts) {
        const se = obj(ofKind(docs, "ServiceEntry", `gearbox-provider-${name}`)[0]?.["spec"]);
        assert.deepEqual(
          arr(se["ports"])
            .map(obj)
            .find((p) => p["number"] === 80),
          { number: 80, name: "http", protocol: "HTTP", targetPort: 443 },
        );
        const dr = obj(ofKind(docs, "DestinationRule", `gearbox-provider-${name}`)[0]?.["spec"]);
        assert.equal(dr["host"], host);
        const tls = obj(
          arr(obj(dr["trafficPolicy"])["portLevelSettings"])
            .map(obj)
            .find((s) => obj(s["port"])["number"] === 80)?.["tls"],
        );
        // The HTTPS interception overlay names the system roots (https-intercept.test.ts).
        const roots = dir.endsWith("https-intercept") ? { caCertificates: "/etc/ssl/certs/ca-certificates.crt" } : {};
        assert.deepEqual(tls, { mode: "SIMPLE", sni: host, subjectAltNames: [host], ...roots });
        const vs = obj(ofKind(docs, "VirtualService", `gearbox-provider-${name}`)[0]?.["spec"]);
        assert.deepEqual(vs["hosts"], [host]);
        const routes = arr(vs["http"]).map(obj);
        for (const [target, targetHost] of hosts) {
          const route = routes.find((r) => r["name"] === `gearbox-to-${target}`);
          assert.deepEqual(arr(route?.["match"]), [{ headers: { "x-gearbox-upstream": { exact: target } } }], `${name} → ${target}`);
          assert.deepEqual(obj(arr(route?.["route"])[0])["destination"], { host: targetHost, port: { number: 80 } });
          assert.deepEqual(route?.["rewrite"], { authority: targetHost });
          assert.deepEqual(obj(obj(route?.["headers"])["request"])["remove"], ["x-gearbox-upstream", EDGE_HEADER]);
          // One retry, only on what never reached the provider or on statuses it answers unbilled.
          const retries = obj(route?.["retries"]);
          assert.equal(retries["attempts"], 1, `${name} → ${target}: one retry, then Gearbox's fallback chain`);
          const retryOn = String(retries["retryOn"]).split(",");
          for (const must of ["connect-failure", "429", "503"]) assert.ok(retryOn.includes(must), `${name} → ${target}: retryOn needs ${must}`);
          for (const c of retryOn)
            assert.ok(
              /^(connect-failure|refused-stream|reset-before-request|429|50[0234])$/.test(c),
              `${name} → ${target}: retryOn '${c}' may repeat a billed call`,
            );
        }
        const edge = routes.find((r) => r["name"] === "gearbox-to-edge");
        assert.deepEqual(obj(arr(edge?.["route"])[0])["destination"], { host: EDGE_HOST, port: { number: 8088 } });
        const passthrough = routes.find((r) => r["name"] === "gearbox-passthrough");
        assert.deepEqual(obj(arr(passthrough?.["route"])[0])["destination"], { host, port: { number: 80 } }, "passthrough goes to the host the app called");
        const last = routes.at(-1);
        assert.equal(obj(last?.["directResponse"])["status"], 502, "an unknown upstream is answered, never forwarded");
        assert.equal(last?.["match"], undefined);
      }
    });

    void it("workloads: contract ports, probes on declared ports, selectors that match, non-root, memory limits", () => {
      const workloads = [...ofKind(docs, "Deployment"), ...ofKind(docs, "DaemonSet")];
      assert.deepEqual(
        ofKind(docs, "Deployment")
          .map((d) => arr(obj(arr(podSpec(d)["containers"])[0])["args"])[0])
          .sort(),
        ["extproc", "xds"],
      );
      const contract: Record<string, number[]> = { extproc: [50051, 8080, 8081, 9464], xds: [18000, 9464], "edge-agent": [8088] };
      for (const w of workloads) {
        const name = `${w.kind} ${w.metadata.name}`;
        assert.ok(matches(obj(obj(obj(w["spec"])["selector"])["matchLabels"]), podLabels(w)), `${name}: selector`);
        const spec = podSpec(w);
        const container = obj(arr(spec["containers"])[0]);
        const mode = String(arr(container["args"])[0]);
        const ports = arr(container["ports"]).map(obj);
        assert.deepEqual(
          ports.map((p) => p["containerPort"]),
          contract[mode],
          `${name}: ports`,
        );
        for (const probe of ["readinessProbe", "livenessProbe", "startupProbe"]) {
          const p = obj(container[probe]);
          if (Object.keys(p).length === 0) continue;
          const port = obj(p["httpGet"])["port"] ?? obj(p["tcpSocket"])["port"] ?? obj(p["grpc"])["port"];
          assert.ok(
            ports.some((q) => q["name"] === port || q["containerPort"] === port),
            `${name}: ${probe} port ${String(port)}`,
          );
        }
        assert.ok(container["readinessProbe"] && container["livenessProbe"], `${name}: probes`);
        assert.ok(obj(obj(container["resources"])["limits"])["memory"], `${name}: memory limit`);
        const secure = { ...obj(spec["securityContext"]), ...obj(container["securityContext"]) };
        assert.equal(secure["runAsNonRoot"], true, `${name}: runAsNonRoot`);
        assert.equal(secure["allowPrivilegeEscalation"], false, `${name}: allowPrivilegeEscalation`);
        const volumes = arr(spec["volumes"]).map(obj);
        for (const m of arr(container["volumeMounts"]).map(obj))
          assert.ok(
            volumes.some((v) => v["name"] === m["name"]),
            `${name}: volume ${String(m["name"])}`,
          );
        for (const v of volumes) {
          const cm = obj(v["configMap"])["name"];
          if (typeof cm === "string") assert.equal(ofKind(docs, "ConfigMap", cm).length, 1, `${name}: ConfigMap ${cm}`);
        }
        const sa = spec["serviceAccountName"];
        assert.equal(ofKind(docs, "ServiceAccount", String(sa)).length, 1, `${name}: ServiceAccount ${String(sa)}`);
        for (const e of arr(container["env"]).map(obj)) {
          if (e["name"] !== "GEARBOX_XDS_ADDRESS") continue;
          const [, svc, ns, port] = /^([^.]+)\.([^.]+)\.svc\.cluster\.local:(\d+)$/.exec(String(e["value"])) ?? [];
          const service = ofKind(docs, "Service", svc).find((s) => s.metadata.namespace === ns);
          assert.ok(service, `${name}: GEARBOX_XDS_ADDRESS names Service ${svc}.${ns}`);
          assert.ok(
            arr(obj(service["spec"])["ports"]).some((p) => String(obj(p)["port"]) === port),
            `${name}: xds port ${port}`,
          );
        }
      }
      for (const svc of ofKind(docs, "Service")) {
        const target = workloads.find((w) => w.metadata.namespace === svc.metadata.namespace && matches(obj(obj(svc["spec"])["selector"]), podLabels(w)));
        assert.ok(target, `Service ${svc.metadata.name} selects a workload`);
        const names = arr(obj(arr(podSpec(target)["containers"])[0])["ports"]).map((p) => obj(p)["name"]);
        for (const p of arr(obj(svc["spec"])["ports"]).map(obj))
          assert.ok(names.includes(p["targetPort"]), `Service ${svc.metadata.name}: targetPort ${String(p["targetPort"])}`);
      }
      for (const pdb of ofKind(docs, "PodDisruptionBudget")) {
        const selector = obj(obj(obj(pdb["spec"])["selector"])["matchLabels"]);
        assert.ok(
          workloads.some((w) => matches(selector, podLabels(w))),
          `PDB ${pdb.metadata.name} selects a workload`,
        );
      }
    });
  });
}

void describe("edge agents (DaemonSets)", () => {
  const daemonSets = ofKind(base, "DaemonSet");

  void it("one for GPU nodes and one for ARM nodes, outside the mesh, with the agent's own flags", () => {
    assert.equal(daemonSets.length, 2);
    const selectors = daemonSets.map((d) => obj(podSpec(d)["nodeSelector"]));
    assert.ok(selectors.some((s) => s["nvidia.com/gpu.present"] === "true"));
    assert.ok(selectors.some((s) => s["kubernetes.io/arch"] === "arm64"));
    for (const ds of daemonSets) {
      const labels = obj(obj(obj(obj(ds["spec"])["template"])["metadata"])["labels"]);
      assert.equal(labels["sidecar.istio.io/inject"], "false", "Envoy dials the agent directly at the node's IP");
      const container = obj(arr(podSpec(ds)["containers"])[0]);
      const args = arr(container["args"]).map(String);
      assert.equal(args[0], "edge-agent");
      for (const flag of args.filter((a) => a.startsWith("--"))) assert.ok(EDGE_AGENT_USAGE.includes(flag), `unknown flag ${flag}`);
      for (const env of arr(container["env"]).map(obj)) {
        if (String(env["name"]).startsWith("GEARBOX_"))
          assert.ok(EDGE_AGENT_USAGE.includes(String(env["name"])), `env ${String(env["name"])} is not the agent's`);
      }
      const port = obj(arr(container["ports"])[0]);
      assert.equal(port["hostPort"], 8088, "advertised as HOST_IP:8088");
      for (const probe of ["readinessProbe", "livenessProbe", "startupProbe"])
        assert.ok(["/readyz", "/healthz"].includes(String(obj(obj(container[probe])["httpGet"])["path"])), probe);
    }
  });

  void it("the models they are assigned are on the path the DaemonSets mount", () => {
    const [configMap] = ofKind(base, "ConfigMap", "gearbox-config");
    const raw = parseConfigText(String(obj(configMap?.["data"])["gearbox.yaml"]), "gearbox.yaml");
    assert.ok(raw.ok);
    const sources = raw.value.edge.assignments.flatMap((a) => a.models.map((m) => m.source));
    assert.ok(sources.length > 0);
    for (const ds of daemonSets) {
      const mounts = arr(obj(arr(podSpec(ds)["containers"])[0])["volumeMounts"]).map((m) => String(obj(m)["mountPath"]));
      for (const source of sources)
        assert.ok(
          mounts.some((m) => source.startsWith(`${m}/`)),
          `${ds.metadata.name}: ${source} is not under a mount`,
        );
    }
  });
});

void describe("overlays", () => {
  const key = (d: Manifest): string => `${d.kind}/${d.metadata.namespace ?? ""}/${d.metadata.name}`;

  void it("shadow changes the ext_proc filter and nothing else", () => {
    const shadow = docsOf("istio/overlays/shadow");
    const changed = shadow.filter((d) => JSON.stringify(d) !== JSON.stringify(base.find((b) => key(b) === key(d)))).map(key);
    assert.deepEqual(changed, ["EnvoyFilter/istio-system/gearbox-ext-proc"]);
  });

  void it("egress-gateway moves the filter to the gateway and routes the mesh's provider calls there", () => {
    const docs = docsOf("istio/overlays/egress-gateway");
    const [filter] = ofKind(docs, "EnvoyFilter", "gearbox-ext-proc");
    assert.deepEqual(obj(obj(filter?.["spec"])["workloadSelector"])["labels"], { istio: "egressgateway" });
    const hosts = [...providers(docs).values()].sort();
    for (const name of providers(docs).keys())
      assert.deepEqual(obj(ofKind(docs, "VirtualService", `gearbox-provider-${name}`)[0]?.["spec"])["gateways"], ["gearbox/gearbox-egress"]);
    const mesh = obj(ofKind(docs, "VirtualService", "gearbox-mesh-to-egress")[0]?.["spec"]);
    assert.deepEqual(arr(mesh["hosts"]).map(String).sort(), hosts, "every provider host goes to the gateway");
    assert.deepEqual(mesh["gateways"], ["mesh"]);
    const server = obj(arr(obj(ofKind(docs, "Gateway", "gearbox-egress")[0]?.["spec"])["servers"])[0]);
    assert.deepEqual(obj(server["tls"]), { mode: "ISTIO_MUTUAL" });
    assert.equal(obj(server["port"])["number"], 443);
  });
});

void describe("the checks can fail", () => {
  const edited = (kind: string, name: string, edit: (d: Manifest) => void): Manifest => {
    const doc = structuredClone(ofKind(base, kind, name)[0] ?? assert.fail(`${kind} ${name}`));
    edit(doc);
    return doc;
  };

  void it("a misspelt Istio field, a bad enum and a missing required field are reported", () => {
    const vs = edited("VirtualService", "gearbox-provider-openai", (d) => {
      obj(arr(obj(d["spec"])["http"])[0])["rewite"] = { authority: "x" };
    });
    assert.deepEqual(validateManifest(vs), ["VirtualService gearbox/gearbox-provider-openai: spec.http[0].rewite: unknown field"]);
    const se = edited("ServiceEntry", "gearbox-provider-openai", (d) => {
      obj(d["spec"])["resolution"] = "ORIGINAL_DST";
    });
    assert.match(validateManifest(se).join("\n"), /resolution must be equal to one of the allowed values/);
    const deployment = edited("Deployment", "gearbox-extproc", (d) => {
      delete obj(arr(podSpec(d)["containers"])[0])["name"];
    });
    assert.match(validateManifest(deployment).join("\n"), /containers\/0 must have required property name/);
  });

  void it("an ext_proc patch with an unknown field or a wrong type, and a MERGE that breaks its message", () => {
    const filter = edited("EnvoyFilter", "gearbox-ext-proc", (d) => {
      const patches = arr(obj(d["spec"])["configPatches"]).map(obj);
      const config = obj(obj(obj(patches[1]?.["patch"])["value"])["typed_config"]);
      config["message_timout"] = "2s";
      config["allow_mode_override"] = "yes";
      obj(obj(patches[0]?.["patch"])["value"])["per_connection_buffer_limit_bytes"] = -1;
    });
    const errors = parseEnvoyFilterPatches(filter)
      .flatMap((p) => p.errors)
      .join("\n");
    assert.match(errors, /typed_config\.message_timout: unknown field "message_timout"/);
    assert.match(errors, /typed_config\.allow_mode_override: expected bool/);
    assert.match(errors, /configPatches\[0\] \(LISTENER MERGE\): per_connection_buffer_limit_bytes: -1 is out of range for uint32/);
  });
});
