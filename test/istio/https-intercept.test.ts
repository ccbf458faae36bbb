/**
 * HTTPS interception on Istio (issue 26): istio/overlays/https-intercept (base + the
 * https-intercept component) and a namespace's workloads with the trust component, rendered by
 * `kubectl kustomize`, validated, their EnvoyFilter patches parsed into Envoy's protos, and
 * checked against the rules of https-intercept.ts; each rule shown failing on a broken copy.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import YAML from "yaml";
import { runCa } from "../../cli/ca/main.ts";
import { ENVOY_CONFIG_DIR } from "../envoy/load-config.ts";
import { HTTPS_FILTER, httpsSelector, meshProblems, providerHosts, workloadProblems } from "./https-intercept.ts";
import { arr, KUSTOMIZATIONS, obj, ofKind, renderKustomize, validateManifest, type Manifest } from "./manifests.ts";

const mesh = renderKustomize("istio/overlays/https-intercept");
const shadow = renderKustomize("test/istio/fixtures/https-shadow");
const app = renderKustomize("test/istio/fixtures/trust-app");
const hosts = providerHosts(mesh);
const selector = httpsSelector(mesh);

/** The keys of the ConfigMap `gearbox ca bundle --configmap` prints (the files the bundle volume holds). */
function bundleKeys(): string[] {
  const dir = mkdtempSync(path.join(tmpdir(), "gearbox-trust-"));
  try {
    const quiet = { out: () => undefined, err: () => undefined, env: {} };
    assert.equal(runCa(["init", "--dir", dir], quiet), 0);
    let text = "";
    assert.equal(runCa(["bundle", "--dir", dir, "--configmap", "shop/gearbox-ca-bundle"], { ...quiet, out: (t: string) => void (text += t) }), 0);
    return Object.keys(obj((YAML.parse(text) as Manifest)["data"]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const keys = bundleKeys();

const chains = (docs: readonly Manifest[]): Record<string, unknown>[] =>
  arr(obj(ofKind(docs, "EnvoyFilter", HTTPS_FILTER)[0]?.["spec"])["configPatches"])
    .map(obj)
    .filter((p) => p["applyTo"] === "FILTER_CHAIN" && obj(p["patch"])["operation"] === "ADD")
    .map((p) => obj(obj(p["patch"])["value"]));
const httpFilters = (chain: Record<string, unknown>): Record<string, unknown>[] =>
  arr(obj(obj(arr(chain["filters"])[0])["typed_config"])["http_filters"]).map(obj);

void describe("HTTPS interception in the mesh (istio/overlays/https-intercept)", () => {
  void it("validates, and every EnvoyFilter patch parses into Envoy's protos", () => {
    assert.deepEqual(mesh.flatMap(validateManifest), []);
    assert.deepEqual(hosts.sort(), ["api.anthropic.com", "api.openai.com", "generativelanguage.googleapis.com"]);
    assert.ok(!ofKind(mesh, "HttpsInterceptTemplate").length, "the local-config template is not applied");
  });

  void it("terminates each provider host's TLS with its leaf, runs the base's filters on the port-80 routes, verifies upstream", () => {
    assert.deepEqual(meshProblems(mesh), []);
  });

  void it("applied to the shadow overlay, its ext_proc observes like shadow's (one source of truth)", () => {
    assert.deepEqual(meshProblems(shadow), []);
    for (const chain of chains(shadow)) {
      const extProc = obj(httpFilters(chain).find((f) => f["name"] === "envoy.filters.http.ext_proc")?.["typed_config"]);
      assert.equal(extProc["observability_mode"], true);
      assert.equal(extProc["failure_mode_allow"], true);
    }
  });

  void it("istio/base alone intercepts no HTTPS", () => {
    assert.deepEqual(meshProblems(renderKustomize("istio/base")), [`no EnvoyFilter ${HTTPS_FILTER}`]);
  });
});

void describe("workloads with istio/components/trust (a namespace's kustomization)", () => {
  void it("validates; every workload is opted in, its sidecar gets the leaves, its containers the bundle", () => {
    assert.deepEqual(app.flatMap(validateManifest), []);
    assert.deepEqual(app.map((d) => d.kind).sort(), ["ConfigMap", "Deployment", "Job", "StatefulSet"]);
    assert.deepEqual(workloadProblems(app, hosts, keys, selector), []);
  });

  void it("keeps the containers' own env and mounts", () => {
    const [checkout] = ofKind(app, "Deployment", "checkout");
    const api = obj(arr(obj(obj(obj(checkout?.["spec"])["template"])["spec"])["containers"])[0]);
    assert.deepEqual(obj(arr(api["env"])[0]), { name: "LOG_LEVEL", value: "info" });
    assert.deepEqual(obj(arr(api["volumeMounts"])[0]), { mountPath: "/tmp", name: "tmp" });
  });

  void it("the SDS files istio-proxy reads are envoy/intercept-sds's (Kustomize cannot load files outside the component)", () => {
    const data = obj(ofKind(app, "ConfigMap", "gearbox-intercept-sds")[0]?.["data"]);
    for (const host of hosts) assert.equal(data[`${host}.yaml`], readFileSync(path.join(ENVOY_CONFIG_DIR, "intercept-sds", `${host}.yaml`), "utf8"), host);
  });
});

void describe("the CA key's Secret (gearbox-ca, gearbox namespace)", () => {
  /** Every reference to Secret `name` in a document (volumes, env, envFrom, projected). */
  const references = (value: unknown, name: string, at = ""): string[] => {
    if (Array.isArray(value)) return value.flatMap((v, i) => references(v, name, `${at}[${i}]`));
    if (typeof value !== "object" || value === null) return [];
    const o = value as Record<string, unknown>;
    const here = o["secretName"] === name || (o["name"] === name && at.match(/(secretRef|secretKeyRef|secret)$/)) ? [at] : [];
    return [...here, ...Object.entries(o).flatMap(([k, v]) => references(v, name, `${at}.${k}`))];
  };

  void it("no rendered pod reads it and no Role grants Secrets, in every install and the app fixture", () => {
    for (const [dir, docs] of [...KUSTOMIZATIONS.map((d) => [d, renderKustomize(d)] as const), ["trust-app", app] as const]) {
      assert.deepEqual(
        docs.flatMap((d) => references(d, "gearbox-ca").map((at) => `${dir}: ${d.kind}/${d.metadata.name}${at}`)),
        [],
      );
      assert.deepEqual(
        docs.filter((d) => /^(Cluster)?Role(Binding)?$/.test(d.kind)).map((d) => `${dir}: ${d.kind}/${d.metadata.name}`),
        [],
      );
    }
  });

  void it("the check sees a mounted or env-referenced CA Secret", () => {
    const pod = {
      spec: { volumes: [{ name: "x", secret: { secretName: "gearbox-ca" } }], containers: [{ envFrom: [{ secretRef: { name: "gearbox-ca" } }] }] },
    };
    assert.deepEqual(references(pod, "gearbox-ca"), [".spec.volumes[0].secret", ".spec.containers[0].envFrom[0].secretRef"]);
  });
});

void describe("the HTTPS checks can fail", () => {
  const edit = (docs: readonly Manifest[], kind: string, name: string, change: (d: Manifest) => void): Manifest[] =>
    docs.map((d) => {
      if (d.kind !== kind || d.metadata.name !== name) return d;
      const copy = structuredClone(d);
      change(copy);
      return copy;
    });
  const patches = (d: Manifest): Record<string, unknown>[] => arr(obj(d["spec"])["configPatches"]).map(obj);
  const add = (d: Manifest, host: string): Record<string, unknown> =>
    obj(obj(patches(d).find((p) => JSON.stringify(obj(obj(p["patch"])["value"])["filter_chain_match"] ?? {}).includes(`"${host}"`))?.["patch"])["value"]);

  void it("a host left passing through, a stranger's SNI, an unwatched leaf, another route table", () => {
    const broken = edit(mesh, "EnvoyFilter", HTTPS_FILTER, (d) => {
      const spec = obj(d["spec"]);
      spec["configPatches"] = patches(d).filter(
        (p) => obj(obj(p["match"])["listener"])["filterChain"] === undefined || JSON.stringify(p).indexOf("api.anthropic.com") < 0,
      );
      obj(add(d, "generativelanguage.googleapis.com")["filter_chain_match"])["server_names"] = ["example.com"];
      const sds = obj(
        arr(obj(obj(obj(add(d, "api.openai.com")["transport_socket"])["typed_config"])["common_tls_context"])["tls_certificate_sds_secret_configs"])[0],
      );
      delete obj(obj(sds["sds_config"])["path_config_source"])["watched_directory"];
      obj(obj(obj(arr(add(d, "api.openai.com")["filters"])[0])["typed_config"])["rds"])["route_config_name"] = "443";
    });
    const problems = meshProblems(broken).join("\n");
    assert.match(problems, /api\.anthropic\.com: Istio's pass-through chain for its SNI is not removed/);
    assert.match(problems, /example\.com: a TLS chain for a host that is not a provider ServiceEntry/);
    assert.match(problems, /generativelanguage\.googleapis\.com: needs exactly one TLS-terminating chain/);
    assert.match(problems, /api\.openai\.com: the SDS source must watch \/etc\/gearbox\/intercept\/api\.openai\.com/);
    assert.match(problems, /api\.openai\.com: the chain must use Istio's port-80 routes/);
  });

  void it("ext_proc or the strip drifting from the base's, a missing or loose :authority check, a host port", () => {
    const drifted = edit(mesh, "EnvoyFilter", "gearbox-ext-proc", (d) => {
      obj(obj(obj(patches(d)[1]?.["patch"])["value"])["typed_config"])["message_timeout"] = "5s";
    });
    assert.match(meshProblems(drifted).join("\n"), /api\.openai\.com: ext_proc differs from gearbox-ext-proc's/);
    const loose = edit(mesh, "EnvoyFilter", HTTPS_FILTER, (d) => {
      const filters = httpFilters(add(d, "api.openai.com"));
      const rbac = obj(obj(filters[1]?.["typed_config"])["rules"]);
      const perm = obj(arr(obj(obj(rbac["policies"])["sni-is-authority"])["permissions"])[0]);
      const anyRule = arr(obj(perm["or_rules"])["rules"]).map(obj);
      obj(obj(arr(obj(anyRule[0]?.["and_rules"])["rules"])[1])["header"])["string_match"] = { exact: "evil.example" };
      const hcm = obj(obj(arr(add(d, "api.anthropic.com")["filters"])[0])["typed_config"]);
      hcm["http_filters"] = arr(hcm["http_filters"]).filter((f) => obj(f)["name"] !== "gearbox.sni-is-authority");
      delete hcm["strip_any_host_port"];
    });
    const problems = meshProblems(loose).join("\n");
    assert.match(problems, /api\.openai\.com: the :authority check lets SNI api\.openai\.com carry :authority evil\.example/);
    assert.match(problems, /api\.anthropic\.com: HTTP filters .* want/);
    assert.match(problems, /api\.anthropic\.com: "api\.anthropic\.com:443" would miss the port-80 virtual host/);
  });

  void it("a selector catching pods without leaves, or pods without ext_proc", () => {
    const wide = edit(mesh, "EnvoyFilter", HTTPS_FILTER, (d) => {
      obj(obj(d["spec"])["workloadSelector"])["labels"] = { "gearbox.dev/intercept": "true" };
    });
    assert.match(meshProblems(wide).join("\n"), /selects every pod gearbox-ext-proc does, also those with no leaves mounted/);
    const narrow = edit(mesh, "EnvoyFilter", HTTPS_FILTER, (d) => {
      obj(obj(d["spec"])["workloadSelector"])["labels"] = { "gearbox.dev/intercept-https": "true", app: "web" };
    });
    assert.match(meshProblems(narrow).join("\n"), /selects pods without gearbox\.dev\/intercept: true \(no ext_proc\)/);
  });

  void it("upstream TLS without its name check or roots, and a patch Envoy would reject", () => {
    const unverified = edit(mesh, "DestinationRule", "gearbox-provider-openai", (d) => {
      const tls = obj(obj(arr(obj(obj(d["spec"])["trafficPolicy"])["portLevelSettings"])[0])["tls"]);
      delete tls["subjectAltNames"];
    });
    assert.match(meshProblems(unverified).join("\n"), /api\.openai\.com: upstream TLS .* does not verify the provider/);
    const typo = edit(mesh, "EnvoyFilter", HTTPS_FILTER, (d) => {
      obj(obj(obj(add(d, "api.openai.com")["transport_socket"])["typed_config"]))["require_client_certificat"] = false;
    });
    assert.match(meshProblems(typo).join("\n"), /require_client_certificat: unknown field/);
  });

  void it("a workload without leaves for its sidecar, a leaf or the CA key in an app container, a runtime left untrusting", () => {
    const broken = edit(app, "Deployment", "checkout", (d) => {
      const template = obj(obj(d["spec"])["template"]);
      const annotations = obj(obj(template["metadata"])["annotations"]);
      delete obj(obj(template["metadata"])["labels"])["gearbox.dev/intercept-https"];
      annotations["sidecar.istio.io/userVolumeMount"] = "[]";
      const pod = obj(template["spec"]);
      pod["volumes"] = [...arr(pod["volumes"]), { name: "ca", secret: { secretName: "gearbox-ca" } }];
      const api = obj(arr(pod["containers"])[0]);
      api["env"] = arr(api["env"]).filter((e) => obj(e)["name"] !== "SSL_CERT_FILE");
    });
    const problems = workloadProblems(broken, hosts, keys, selector).join("\n");
    assert.match(
      problems,
      /Deployment checkout: istio-proxy must mount Secret gearbox-intercept-api-openai-com read-only at \/etc\/gearbox\/intercept\/api\.openai\.com/,
    );
    assert.match(problems, /Deployment checkout: pods not labelled gearbox\.dev\/intercept-https: true/);
    assert.match(problems, /Deployment checkout: mounts the CA's Secret gearbox-ca/);
    assert.match(problems, /Deployment checkout: an app container could mount Secret "gearbox-ca"/);
    assert.match(problems, /Deployment checkout\/api: SSL_CERT_FILE is undefined/);
    assert.match(
      workloadProblems(app, hosts, ["gearbox-ca.crt"], selector).join("\n"),
      /SSL_CERT_FILE: \/etc\/gearbox\/ca\/ca-bundle\.crt is not a file of the bundle ConfigMap/,
    );
  });
});
