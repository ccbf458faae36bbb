/**
 * The Helm chart: generated from istio/base (never hand-edited), values.yaml whose defaults
 * reproduce the base, templates whose syntax and value references are sound; rendered with
 * `helm template` and validated like the Kustomize output where helm is installed.
 */
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import YAML from "yaml";
import { baseProviders, BINDINGS, CHART_DIR, chartValues, generateTemplates, getAt, HAND_WRITTEN, TEMPLATES_DIR, valueAt } from "./chart.ts";
import { parseEnvoyFilterPatches } from "./envoy-patches.ts";
import { ofKind, parseManifests, renderKustomize, validateManifest } from "./manifests.ts";

const base = renderKustomize("istio/base");
const values = chartValues();

void describe("Helm chart istio/chart/gearbox", () => {
  void it("templates are exactly what istio/base generates (run node istio/chart/generate.mjs after changing the base)", () => {
    const expected = generateTemplates(base);
    const committed = readdirSync(TEMPLATES_DIR).filter((f) => !HAND_WRITTEN.includes(f));
    assert.deepEqual(committed.sort(), [...expected.keys()].sort());
    for (const [name, text] of expected) assert.equal(readFileSync(path.join(TEMPLATES_DIR, name), "utf8"), text, `${name} is stale`);
  });

  void it("values.yaml defaults reproduce the base at every bound field", () => {
    for (const b of BINDINGS) {
      const doc = ofKind(base, b.kind, b.name)[0];
      assert.ok(doc, `${b.kind} ${b.name}`);
      const inBase = getAt(doc, b.path);
      assert.deepEqual(b.fromValues(values), b.fromBase ? b.fromBase(inBase) : inBase, `${b.kind} ${b.name} ${JSON.stringify(b.path)} ← ${b.expr}`);
    }
    const byName = (a: { name: string }, b: { name: string }): number => a.name.localeCompare(b.name);
    assert.deepEqual(
      [...(values["providers"] as { name: string; host: string }[])].sort(byName),
      [...baseProviders(base)].map(([name, host]) => ({ name, host })).sort(byName),
    );
    assert.deepEqual(
      valueAt(values, "intercept.namespaces"),
      ofKind(base, "EnvoyFilter", "gearbox-ext-proc").map((f) => f.metadata.namespace),
    );
    assert.equal(valueAt(values, "edgeAgent.enabled"), ofKind(base, "DaemonSet").length > 0);
  });

  void it("values name providers the config knows, with DNS-safe names and hosts", () => {
    for (const file of ["values.yaml", ...readdirSync(path.join(CHART_DIR, "ci")).map((f) => `ci/${f}`)]) {
      const v = { ...values, ...(YAML.parse(readFileSync(path.join(CHART_DIR, file), "utf8")) as Record<string, unknown>) };
      const providers = v["providers"] as { name: string; host: string }[];
      const configured = ((valueAt(v, "config.providers") as { name: string }[] | undefined) ?? []).map((p) => p.name);
      for (const p of providers) {
        assert.match(p.name, /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, `${file}: provider name ${p.name}`);
        assert.match(p.host, /^[a-z0-9.-]+$/, `${file}: provider host ${p.host}`);
        assert.ok(configured.includes(p.name), `${file}: provider ${p.name} is not in config.providers`);
      }
      assert.equal(typeof v["shadow"], "boolean", `${file}: shadow`);
    }
  });

  void it("Chart.yaml is a v2 application chart; templates are balanced and reference only existing values", () => {
    const chart = YAML.parse(readFileSync(path.join(CHART_DIR, "Chart.yaml"), "utf8")) as Record<string, unknown>;
    assert.equal(chart["apiVersion"], "v2");
    assert.equal(chart["name"], "gearbox");
    assert.match(String(chart["version"]), /^\d+\.\d+\.\d+/);
    for (const file of readdirSync(TEMPLATES_DIR)) {
      const text = readFileSync(path.join(TEMPLATES_DIR, file), "utf8");
      const actions = [...text.matchAll(/\{\{-?\s*(.*?)\s*-?\}\}/g)].map((m) => m[1] ?? "");
      assert.equal(actions.length, (text.match(/\{\{/g) ?? []).length, `${file}: unbalanced {{ }}`);
      let depth = 0;
      for (const a of actions) {
        if (/^(range|if|with)\b/.test(a)) depth++;
        if (a === "end") depth--;
        assert.ok(depth >= 0, `${file}: end without block`);
      }
      assert.equal(depth, 0, `${file}: unclosed block`);
      for (const m of text.matchAll(/\.Values((?:\.[A-Za-z0-9_]+)+)/g))
        assert.notEqual(valueAt(values, (m[1] ?? "").slice(1)), undefined, `${file}: .Values${m[1] ?? ""} is not in values.yaml`);
    }
  });

  const helm = spawnSync("helm", ["version", "--short"], { encoding: "utf8" });
  for (const valuesFile of [undefined, "ci/shadow-values.yaml"]) {
    void it(`helm template (${valuesFile ?? "default values"}) validates like the Kustomize output`, (t) => {
      if (helm.error || helm.status !== 0) {
        t.skip("helm is not installed on this machine (Debian has no package; no network to fetch it): the chart is checked statically above");
        return;
      }
      const args = ["template", "gearbox", CHART_DIR, "--namespace", "gearbox", ...(valuesFile ? ["-f", path.join(CHART_DIR, valuesFile)] : [])];
      const docs = parseManifests(execFileSync("helm", args, { encoding: "utf8" }), `helm ${args.join(" ")}`);
      assert.deepEqual(docs.flatMap(validateManifest), []);
      for (const f of ofKind(docs, "EnvoyFilter"))
        assert.deepEqual(
          parseEnvoyFilterPatches(f).flatMap((p) => p.errors),
          [],
        );
      if (!valuesFile)
        assert.deepEqual(
          docs.map((d) => JSON.stringify(d)).sort(),
          base
            .filter((d) => d.kind !== "Namespace")
            .map((d) => JSON.stringify(d))
            .sort(),
        );
    });
  }
});
