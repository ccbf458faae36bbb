/**
 * Structural checks of the edge-agent DaemonSets (a cluster is not available here): what
 * Kubernetes would reject or what would break the agent at run time.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { EDGE_AGENT_USAGE } from "../../edge-agent/main.ts";

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === "object" && v !== null ? (v as Obj) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

const docs = parseAllDocuments(readFileSync(fileURLToPath(new URL("../../istio/edge-agent-daemonset.yaml", import.meta.url)), "utf8")).map((d) => {
  assert.deepEqual(d.errors, []);
  return obj(d.toJS());
});
const daemonSets = docs.filter((d) => d.kind === "DaemonSet");

test("one DaemonSet for GPU nodes and one for ARM nodes", () => {
  assert.equal(daemonSets.length, 2);
  const selectors = daemonSets.map((d) => obj(obj(obj(obj(d.spec).template).spec).nodeSelector));
  assert.ok(selectors.some((s) => s["nvidia.com/gpu.present"] === "true"));
  assert.ok(selectors.some((s) => s["kubernetes.io/arch"] === "arm64"));
});

for (const ds of daemonSets) {
  const name = String(obj(ds.metadata).name);
  test(`${name}: selector matches the pod labels; probes, ports and flags are the agent's`, () => {
    const spec = obj(ds.spec);
    const template = obj(spec.template);
    const labels = obj(obj(template.metadata).labels);
    for (const [k, v] of Object.entries(obj(obj(spec.selector).matchLabels))) assert.equal(labels[k], v, `selector ${k}`);
    const [container] = arr(obj(template.spec).containers).map(obj);
    assert.ok(container);
    const ports = arr(container.ports).map(obj);
    assert.deepEqual(ports.map((p) => p.containerPort), [8088]);
    for (const probe of ["readinessProbe", "livenessProbe", "startupProbe"]) {
      const get = obj(obj(container[probe]).httpGet);
      assert.ok(["/readyz", "/healthz"].includes(String(get.path)), `${probe} path`);
      assert.ok(ports.some((p) => p.name === get.port), `${probe} port`);
    }
    const args = arr(container.args).map(String);
    assert.equal(args[0], "edge-agent");
    for (const flag of args.filter((a) => a.startsWith("--"))) assert.ok(EDGE_AGENT_USAGE.includes(flag), `unknown flag ${flag}`);
    const limits = obj(obj(container.resources).limits);
    assert.ok(limits.memory, "a memory limit");
    const mounts = arr(container.volumeMounts).map(obj);
    const volumes = arr(obj(template.spec).volumes).map(obj);
    for (const m of mounts) assert.ok(volumes.some((v) => v.name === m.name), `volume ${String(m.name)}`);
  });
}
