/**
 * The layering holds across the repository (see import-graph.ts for the rules), and the checker
 * itself sees a forbidden import when one is there.
 */
import assert from "node:assert/strict";
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { REPO } from "../istio/manifests.ts";
import { importGraph, importsOf, layerViolations } from "./import-graph.ts";

const CODE = ["common", "extproc", "xds", "edge-agent", "cli", "demo"];

void describe("import layering", () => {
  void it("reads static, type-only, re-exported, multi-line and dynamic relative imports", () => {
    const text = [
      'import { a } from "../x/a.ts";',
      'import type { B } from "./b.ts";',
      'export { c } from "../../common/c.ts";',
      "import {\n  d,\n  e,\n} from '../d.ts';",
      'const f = await import("./f.ts");',
      'import "./side-effect.ts";',
      'import { g } from "node:fs";',
    ].join("\n");
    assert.deepEqual(
      importsOf("extproc/cache/exact.ts", text).map((e) => [e.to, e.typeOnly]),
      [
        ["extproc/x/a.ts", false],
        ["extproc/cache/b.ts", true],
        ["common/c.ts", false],
        ["extproc/d.ts", false],
        ["extproc/cache/f.ts", false],
        ["extproc/cache/side-effect.ts", false],
      ],
    );
  });

  void it("reports a forbidden import and lets tests cross process lines", () => {
    const edges = [
      { from: "edge-agent/server.ts", to: "extproc/errors.ts" },
      { from: "edge-agent/server.test.ts", to: "xds/registry/registry.ts" },
      { from: "extproc/routing/intent/edge-classifier.ts", to: "extproc/http/upstream-client.ts" },
      { from: "extproc/cache/exact-cache.ts", to: "extproc/cascade/sse-from-completion.ts" },
      { from: "extproc/cache/exact-cache.test.ts", to: "extproc/cascade/edge-agents.ts" },
      { from: "common/schemas/sse.ts", to: "extproc/result.ts" },
      { from: "xds/control-plane.ts", to: "common/telemetry/logger.ts" },
      { from: "xds/control-plane.ts", to: "extproc/config/load.ts", typeOnly: true },
      { from: "xds/assignments.ts", to: "extproc/config/schema.ts", typeOnly: false },
      { from: "xds/control-plane.ts", to: "extproc/processor/processor.ts" },
    ];
    assert.deepEqual(layerViolations(edges), [
      "common/ imports no process (extproc/, xds/, edge-agent/, cli/): common/schemas/sse.ts -> extproc/result.ts",
      "edge-agent/ imports neither extproc/ nor xds/ (shared code lives in common/): edge-agent/server.ts -> extproc/errors.ts",
      "xds/ does not import extproc/ (shared code lives in common/): xds/assignments.ts -> extproc/config/schema.ts",
      "xds/ does not import extproc/ (shared code lives in common/): xds/control-plane.ts -> extproc/processor/processor.ts",
      "extproc/routing/ imports no transport (extproc/http/, extproc/grpc/): extproc/routing/intent/edge-classifier.ts -> extproc/http/upstream-client.ts",
      "extproc/cache/ does not import extproc/cascade/: extproc/cache/exact-cache.ts -> extproc/cascade/sse-from-completion.ts",
      "extproc/cache/ does not import extproc/cascade/: extproc/cache/exact-cache.test.ts -> extproc/cascade/edge-agents.ts",
    ]);
  });

  void it("the repository keeps the layering", () => {
    const edges = importGraph(
      REPO,
      CODE.filter((d) => existsDir(d)),
    );
    assert.ok(edges.length > 500, `only ${edges.length} imports read: the scan missed the code`);
    assert.deepEqual(layerViolations(edges), []);
  });
});

function existsDir(dir: string): boolean {
  const p = path.join(REPO, dir);
  return existsSync(p) && statSync(p).isDirectory();
}
