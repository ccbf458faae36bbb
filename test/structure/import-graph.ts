/**
 * The repository's import graph, read from the source: every relative import (static, dynamic,
 * `export … from`) of every TypeScript file under the code folders, resolved to a repo path; and
 * the layering rules the processes keep (ARCHITECTURE.md, "Code layout"), checked edge by edge.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

export interface ImportEdge {
  /** Importing file, repo-relative with forward slashes. */
  from: string;
  /** Imported file, repo-relative with forward slashes. */
  to: string;
  /** `import type` / `export type`: gone at run time. */
  typeOnly?: boolean;
}

export interface LayerRule {
  /** What the rule keeps apart, as a reader would say it. */
  name: string;
  /** Importing files the rule covers. */
  from: (file: string) => boolean;
  /** Imported files it forbids for them. */
  forbids: (file: string) => boolean;
  /** Type-only edges "from -> to" the rule lets through on purpose (documented beside the rule and in the README's layout). */
  typesAllowed?: ReadonlySet<string>;
}

const SPEC = /((?:import|export)\s[^;]*?from\s+|import\(\s*|import\s+)(["'])(\.{1,2}\/[^"']+)\2/gs;
const SKIP = new Set(["node_modules", "dist", "generated", ".git"]);

const isTest = (file: string): boolean => file.endsWith(".test.ts");
const under =
  (dir: string) =>
  (file: string): boolean =>
    file.startsWith(`${dir}/`);

/** Relative imports of every `.ts` file under `dirs` (repo-relative), resolved against `root`. */
export function importGraph(root: string, dirs: readonly string[]): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const dir of dirs) {
    for (const entry of readdirSync(path.join(root, dir), { recursive: true, encoding: "utf8" })) {
      const rel = `${dir}/${entry.split(path.sep).join("/")}`;
      if (!rel.endsWith(".ts") || rel.split("/").some((part) => SKIP.has(part))) continue;
      edges.push(...importsOf(rel, readFileSync(path.join(root, rel), "utf8")));
    }
  }
  return edges;
}

/** The relative imports in one file's text, resolved to repo-relative paths. */
export function importsOf(file: string, text: string): ImportEdge[] {
  return [...text.matchAll(SPEC)].map((m) => ({
    from: file,
    to: path.posix.normalize(path.posix.join(path.posix.dirname(file), m[3] ?? "")),
    typeOnly: /^(?:import|export)\s+type\s/.test(m[1] ?? ""),
  }));
}

/**
 * The layering: shared code (common/) imports no process; the edge agent and the control plane do
 * not reach into the ext_proc service; routing decisions import no transport; the cache knows
 * nothing of the cascade. Tests may cross process lines to run the real thing on both ends (an
 * edge agent's client against the real registry), so the process rules cover non-test files.
 */
export const LAYER_RULES: readonly LayerRule[] = [
  {
    name: "common/ imports no process (extproc/, xds/, edge-agent/, cli/)",
    from: (f) => under("common")(f) && !isTest(f),
    forbids: (t) => ["extproc", "xds", "edge-agent", "cli", "demo"].some((d) => under(d)(t)),
  },
  {
    name: "edge-agent/ imports neither extproc/ nor xds/ (shared code lives in common/)",
    from: (f) => under("edge-agent")(f) && !isTest(f),
    forbids: (t) => under("extproc")(t) || under("xds")(t),
  },
  {
    name: "xds/ does not import extproc/ (shared code lives in common/)",
    from: (f) => under("xds")(f) && !isTest(f),
    forbids: under("extproc"),
    // The config file's types, which every process reads. Moving extproc/config/ to common/ would
    // drag routing logic along (load.ts checks fallback chains with routing/provider-route's
    // resolveProvider), so the control plane takes its types from there: type-only imports.
    typesAllowed: new Set([
      "xds/assignments.ts -> extproc/config/schema.ts",
      "xds/control-plane.ts -> extproc/config/load.ts",
      "xds/resources/envoy.ts -> extproc/providers/provider.ts",
    ]),
  },
  {
    name: "extproc/routing/ imports no transport (extproc/http/, extproc/grpc/)",
    from: under("extproc/routing"),
    forbids: (t) => under("extproc/http")(t) || under("extproc/grpc")(t),
  },
  {
    name: "extproc/cache/ does not import extproc/cascade/",
    from: under("extproc/cache"),
    forbids: under("extproc/cascade"),
  },
];

/** Every edge that breaks a rule, as "rule: from -> to". */
export function layerViolations(edges: readonly ImportEdge[], rules: readonly LayerRule[] = LAYER_RULES): string[] {
  const out: string[] = [];
  for (const rule of rules) {
    for (const e of edges) {
      if (rule.from(e.from) && rule.forbids(e.to) && !(e.typeOnly === true && rule.typesAllowed?.has(`${e.from} -> ${e.to}`)))
        out.push(`${rule.name}: ${e.from} -> ${e.to}`);
    }
  }
  return out;
}
