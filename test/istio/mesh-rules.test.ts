/**
 * The mesh install against the Istio and Envoy rules of mesh-rules.ts, on every rendering
 * (Kustomize base and overlays, the chart's shadow values), and each rule shown to fail on the
 * manifests as they were before issue 16.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import YAML from "yaml";
import { endpointFor } from "../../extproc/endpoints/registry.ts";
import { BINDINGS, CHART_DIR, chartValues, getAt } from "./chart.ts";
import { arr, KUSTOMIZATIONS, obj, ofKind, renderKustomize, REPO, type Manifest } from "./manifests.ts";
import {
  bodiesOnlyWhereProcessed,
  destinationRulesReachEveryCaller,
  firstMatch,
  processedPaths,
  retriesExplicit,
  ROOT_NAMESPACE,
  shadowFailsOpen,
  tlsOriginationChecksTheName,
  UNPROCESSED_SAMPLES,
} from "./mesh-rules.ts";

const rendered = new Map<string, Manifest[]>(KUSTOMIZATIONS.map((dir) => [dir, renderKustomize(dir)]));
const docsOf = (dir: string): Manifest[] => rendered.get(dir) ?? assert.fail(`${dir} not rendered`);

/** The base with the chart's bound EnvoyFilter fields set from `values` (what helm renders there). */
function chartEnvoyFilter(values: Record<string, unknown>): Manifest {
  const filter = structuredClone(ofKind(docsOf("istio/base"), "EnvoyFilter", "gearbox-ext-proc")[0] ?? assert.fail("no EnvoyFilter"));
  for (const b of BINDINGS.filter((x) => x.kind === "EnvoyFilter")) {
    const parent = getAt(filter, b.path.slice(0, -1)) as Record<string | number, unknown>;
    parent[b.path.at(-1) as string] = b.fromValues(values);
  }
  return filter;
}

const rules = { destinationRulesReachEveryCaller, tlsOriginationChecksTheName, shadowFailsOpen, retriesExplicit, bodiesOnlyWhereProcessed };

for (const dir of KUSTOMIZATIONS) {
  void describe(`Istio and Envoy rules: kubectl kustomize ${dir}`, () => {
    for (const [name, rule] of Object.entries(rules)) {
      void it(name, () => assert.deepEqual(rule(docsOf(dir)), []));
    }
  });
}

void describe("Istio and Envoy rules: the Helm chart", () => {
  void it("shadow: true (ci/shadow-values.yaml) observes and fails open; the defaults fail closed", () => {
    const shadowValues = { ...chartValues(), ...(YAML.parse(readFileSync(path.join(CHART_DIR, "ci/shadow-values.yaml"), "utf8")) as Record<string, unknown>) };
    assert.equal(shadowValues["shadow"], true);
    const shadow = chartEnvoyFilter(shadowValues);
    assert.deepEqual(shadowFailsOpen([shadow]), []);
    const config = obj(getAt(shadow, ["spec", "configPatches", 1, "patch", "value", "typed_config"]));
    assert.deepEqual([config["observability_mode"], config["failure_mode_allow"]], [true, true]);
    const live = obj(getAt(chartEnvoyFilter(chartValues()), ["spec", "configPatches", 1, "patch", "value", "typed_config"]));
    assert.deepEqual([live["observability_mode"], live["failure_mode_allow"]], [false, false], "live waits for Gearbox and fails closed");
  });
});

void describe("what the rules mean on the rendered base", () => {
  const base = docsOf("istio/base");

  void it("the sample paths split as Gearbox's processor splits them", () => {
    for (const p of processedPaths()) assert.ok(endpointFor(p), p);
    for (const p of UNPROCESSED_SAMPLES) assert.equal(endpointFor(p), undefined, `${p} is processed by Gearbox: it needs its body`);
  });

  void it("an upload to a provider host goes, headers only, to that host; a chat call is buffered and routed by Gearbox", () => {
    const upload = firstMatch(base, "api.anthropic.com", "/v1/files");
    assert.equal(upload.route?.["name"], "gearbox-unprocessed");
    assert.deepEqual(obj(obj(arr(upload.route?.["route"])[0])["destination"])["host"], "api.anthropic.com");
    assert.deepEqual([upload.mode["request_header_mode"], upload.mode["request_body_mode"], upload.mode["response_body_mode"]], ["SEND", "NONE", "NONE"]);
    const chat = firstMatch(base, "api.openai.com", "/v1/chat/completions");
    assert.equal(chat.route?.["name"], "gearbox-passthrough", "before Gearbox answers, a call matches the pass-through route");
    assert.equal(chat.mode["request_body_mode"], "BUFFERED");
  });

  void it("the egress-gateway DestinationRule lives in the root namespace", () => {
    const dr = ofKind(docsOf("istio/overlays/egress-gateway"), "DestinationRule", "gearbox-egress-gateway")[0];
    assert.equal(dr?.metadata.namespace, ROOT_NAMESPACE);
  });

  void it("edge agents opt out of injection by label", () => {
    for (const ds of ofKind(base, "DaemonSet")) {
      const meta = obj(obj(obj(ds["spec"])["template"])["metadata"]);
      assert.equal(obj(meta["labels"])["sidecar.istio.io/inject"], "false", ds.metadata.name);
      assert.equal(obj(meta["annotations"])["sidecar.istio.io/inject"], undefined, `${ds.metadata.name}: the label, not the annotation`);
    }
  });

  void it("provider ServiceEntries resolve like Envoy's LOGICAL_DNS (DNS_ROUND_ROBIN)", () => {
    const providers = ofKind(base, "ServiceEntry").filter((se) => se.metadata.labels?.["gearbox.dev/provider"]);
    assert.ok(providers.length >= 3);
    for (const se of providers) assert.equal(obj(se["spec"])["resolution"], "DNS_ROUND_ROBIN", se.metadata.name);
  });
});

void describe("each rule fails on the manifests before issue 16", () => {
  const base = docsOf("istio/base");
  const gateway = docsOf("istio/overlays/egress-gateway");
  const edit = (docs: readonly Manifest[], change: (d: Manifest) => void, pick: (d: Manifest) => boolean): Manifest[] =>
    docs.map((d) => {
      if (!pick(d)) return d;
      const copy = structuredClone(d);
      change(copy);
      return copy;
    });
  const named = (kind: string, name: string) => (d: Manifest) => d.kind === kind && d.metadata.name === name;
  const providerVs = (d: Manifest) => d.kind === "VirtualService" && d.metadata.labels?.["gearbox.dev/provider"] !== undefined;
  const routes = (d: Manifest) => arr(obj(d["spec"])["http"]).map(obj);

  void it("1: the egress gateway's DestinationRule in namespace gearbox", () => {
    const before = edit(gateway, (d) => void (d.metadata.namespace = "gearbox"), named("DestinationRule", "gearbox-egress-gateway"));
    assert.deepEqual(destinationRulesReachEveryCaller(before), [
      "DestinationRule gearbox/gearbox-egress-gateway: applies only to callers in gearbox; put it in istio-system (the service's namespace or the root namespace)",
    ]);
    const hidden = edit(base, (d) => void (obj(d["spec"])["exportTo"] = ["."]), named("DestinationRule", "gearbox-provider-openai"));
    assert.match(destinationRulesReachEveryCaller(hidden).join("\n"), /gearbox-provider-openai: exportTo \["\."\] hides it/);
  });

  void it("2: the shadow overlay with failure_mode_allow false", () => {
    const before = edit(
      docsOf("istio/overlays/shadow"),
      (d) => void (obj(getAt(d, ["spec", "configPatches", 1, "patch", "value", "typed_config"]))["failure_mode_allow"] = false),
      named("EnvoyFilter", "gearbox-ext-proc"),
    );
    assert.equal(shadowFailsOpen(before).length, 1);
  });

  void it("4: sni without subjectAltNames", () => {
    const before = edit(
      base,
      (d) => {
        for (const s of arr(obj(obj(d["spec"])["trafficPolicy"])["portLevelSettings"])) delete obj(obj(s)["tls"])["subjectAltNames"];
      },
      (d) => d.kind === "DestinationRule" && d.metadata.labels?.["gearbox.dev/provider"] !== undefined,
    );
    assert.equal(tlsOriginationChecksTheName(before).length, 3);
  });

  void it("7: routes without retries, and an edge route that retries", () => {
    const before = edit(
      base,
      (d) => {
        for (const r of routes(d))
          if (r["name"] !== "gearbox-no-route" && !String(r["name"]).match(/^gearbox-to-(openai|anthropic|gemini)$/)) delete r["retries"];
      },
      providerVs,
    );
    const errors = retriesExplicit(before);
    assert.equal(errors.length, 9, errors.join("\n")); // edge, passthrough, unprocessed × 3 hosts
    assert.ok(errors.every((e) => e.includes("no retries")));
    const retrying = edit(
      base,
      (d) => {
        for (const r of routes(d)) if (r["name"] === "gearbox-to-edge") r["retries"] = { attempts: 2, retryOn: "connect-failure" };
        for (const r of routes(d)) if (r["name"] === "gearbox-passthrough") r["retries"] = { attempts: 1, retryOn: "connect-failure,503" };
      },
      named("VirtualService", "gearbox-provider-openai"),
    );
    assert.deepEqual(retriesExplicit(retrying), [
      "VirtualService gearbox/gearbox-provider-openai: http[4] (gearbox-to-edge): the edge route must not retry (attempts: 0): Gearbox's cascade upgrades a failed edge answer",
      "VirtualService gearbox/gearbox-provider-openai: http[5] (gearbox-passthrough): retryOn '503' may repeat a call that reached the upstream",
    ]);
  });

  void it("8: no headers-only route for the APIs Gearbox does not process", () => {
    const before = edit(base, (d) => void (obj(d["spec"])["http"] = routes(d).filter((r) => r["name"] !== "gearbox-unprocessed")), providerVs);
    const errors = bodiesOnlyWhereProcessed(before);
    assert.equal(errors.length, 3 * UNPROCESSED_SAMPLES.length * 2, errors.slice(0, 3).join("\n"));
    assert.match(errors[0] ?? "", /^api\.anthropic\.com\/v1\/files: route gearbox-passthrough: request_body_mode BUFFERED/);
  });
});

void describe("the install guide (docs/install.md)", () => {
  const guide = readFileSync(path.join(REPO, "docs/install.md"), "utf8");
  const section = (title: string): string => {
    const start = guide.indexOf(`### ${title}`);
    assert.ok(start >= 0, `no section ${title}`);
    const next = guide.indexOf("\n### ", start + 4);
    return guide.slice(start, next < 0 ? undefined : next);
  };

  void it("rolls back safely: apps back to https:// before the Istio resources go", () => {
    const rollback = section("4.6 Roll back");
    const https = rollback.indexOf("OPENAI_BASE_URL=https://");
    const remove = rollback.lastIndexOf("Only then `kubectl delete -k istio/base`");
    assert.ok(https >= 0 && remove > https, "point apps at https:// first, delete last");
    assert.match(section("4.4 Opt workloads in"), /without one[^]*cleartext/, "warns about pods without a sidecar");
  });

  void it("states the versions the manifests need, consistent with the requirements line", () => {
    const limits = section("4.7 Versions and limits");
    for (const gate of ["observability_mode", "reset-before-request", "retries", "directResponse"]) assert.ok(limits.includes(gate), gate);
    const minimum = /Minimum: \*\*Istio (\d+\.\d+) with its Envoy (\d+\.\d+)\*\*/.exec(limits);
    assert.ok(minimum, "a minimum Istio and Envoy version");
    assert.match(guide, new RegExp(`Requirements: Istio ≥ ${minimum[1]?.replace(".", "\\.") ?? ""} \\(its Envoy ≥ ${minimum[2]?.replace(".", "\\.") ?? ""}`));
    assert.doesNotMatch(guide, /Istio ≥ 1\.22 \(VirtualService `directResponse`\)/);
  });
});
