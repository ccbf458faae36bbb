/**
 * Edge calls in the rendered mesh install: guarded on ext_proc's dynamic metadata, routing
 * headers stripped mesh-wide; each check shown failing on the previous manifests' shape.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { edgeRouteGuardErrors, headerStripErrors } from "./edge-guard.ts";
import { arr, KUSTOMIZATIONS, obj, renderKustomize, type Manifest } from "./manifests.ts";

const rendered = new Map(KUSTOMIZATIONS.map((dir) => [dir, renderKustomize(dir)]));

for (const [dir, docs] of rendered) {
  void describe(dir, () => {
    void it("the edge route needs an ip:port in gearbox.edge/endpoint, and every sidecar strips the routing headers first", () => {
      assert.deepEqual(edgeRouteGuardErrors(docs), []);
      assert.deepEqual(headerStripErrors(docs), []);
    });
  });
}

/** The base with every EnvoyFilter patch for which `drop` holds removed (the previous manifests lacked them). */
function without(drop: (patch: Record<string, unknown>, filter: Manifest) => boolean): Manifest[] {
  return structuredClone(rendered.get("istio/base") ?? assert.fail("no base")).map((doc) => {
    if (doc.kind !== "EnvoyFilter") return doc;
    const spec = obj(doc["spec"]);
    spec["configPatches"] = arr(spec["configPatches"]).filter((p) => !drop(obj(p), doc));
    return doc;
  });
}

void describe("the checks fail on the previous manifests", () => {
  void it("no guard on gearbox-to-edge", () => {
    const docs = without((p) => JSON.stringify(p["match"]).includes("gearbox-to-edge"));
    assert.match(edgeRouteGuardErrors(docs).join("\n"), /no EnvoyFilter requires gearbox\.edge\/endpoint/);
  });

  void it("a guard that lets hostnames or out-of-range ports through", () => {
    const docs = without(() => false);
    for (const doc of docs) {
      for (const p of arr(obj(doc["spec"])["configPatches"])) {
        const m = JSON.stringify(obj(p)["match"]);
        if (!m.includes("gearbox-to-edge")) continue;
        const value = obj(obj(obj(p)["patch"])["value"]);
        const guard = obj(arr(obj(value["match"])["dynamic_metadata"])[0]);
        obj(obj(obj(guard["value"])["string_match"])["safe_regex"])["regex"] = ".+:[0-9]+";
      }
    }
    assert.match(edgeRouteGuardErrors(docs).join("\n"), /lets "api\.openai\.com:80" through/);
  });

  void it("no mesh-wide header strip", () => {
    const docs = without((_p, filter) => filter.metadata.name === "gearbox-strip-routing-headers");
    assert.match(headerStripErrors(docs).join("\n"), /no mesh-wide EnvoyFilter/);
  });
});
