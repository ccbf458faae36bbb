/**
 * The Helm chart (istio/chart/gearbox) is derived from the Kustomize base, never edited by hand:
 * each rendered base document becomes a template, with the fields the chart's values control
 * replaced by Helm expressions (BINDINGS), per-provider documents and items turned into
 * `range` loops over `.Values.providers`, and the EnvoyFilter into a loop over the intercepted
 * namespaces. Run `node --import tsx test/istio/chart.ts --write` (or `node
 * istio/chart/generate.mjs`) after changing istio/base; the tests fail while the committed
 * chart differs from what this produces, and while values.yaml's defaults differ from the base.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { arr, obj, renderKustomize, REPO, type Manifest } from "./manifests.ts";

export const CHART_DIR = path.join(REPO, "istio/chart/gearbox");
export const TEMPLATES_DIR = path.join(CHART_DIR, "templates");
/** Files under templates/ written by hand (not generated). */
export const HAND_WRITTEN = ["NOTES.txt"];

type Values = Record<string, unknown>;
type Step = string | number | { name: string };

/** One field of one base document, controlled by the chart's values. */
export interface Binding {
  readonly kind: string;
  readonly name: string;
  /** Path in the document; `{name}` picks the array item with that name. */
  readonly path: readonly Step[];
  /** Helm expression producing the field's value (written as `{{ toJson (expr) }}`). */
  readonly expr: string;
  /** What the expression yields for given values, to check values.yaml against the base. */
  readonly fromValues: (values: Values) => unknown;
  /** How the base holds the value, when not as is (the config is YAML text in a ConfigMap). */
  readonly fromBase?: (value: unknown) => unknown;
}

/** Reads a dotted path of values. */
export function valueAt(values: unknown, dotted: string): unknown {
  return dotted.split(".").reduce<unknown>((v, k) => obj(v)[k], values);
}

const image = (prefix: string) => ({
  expr: `printf "%s:%s" $.Values.${prefix}.repository $.Values.${prefix}.tag`,
  fromValues: (v: Values) => `${String(valueAt(v, `${prefix}.repository`))}:${String(valueAt(v, `${prefix}.tag`))}`,
});
const direct = (dotted: string) => ({ expr: `$.Values.${dotted}`, fromValues: (v: Values) => valueAt(v, dotted) });
const container = ["spec", "template", "spec", "containers", 0] as const;
const secretName = (env: string): Step[] => [...container, "env", { name: env }, "valueFrom", "secretKeyRef", "name"];
const bodyMode = { expr: `ternary "STREAMED" "BUFFERED" $.Values.shadow`, fromValues: (v: Values) => (v["shadow"] === true ? "STREAMED" : "BUFFERED") };
const extProc = ["spec", "configPatches", 1, "patch", "value", "typed_config"] as const;

export const BINDINGS: readonly Binding[] = [
  {
    kind: "ConfigMap",
    name: "gearbox-config",
    path: ["data", "gearbox.yaml"],
    expr: "toYaml $.Values.config",
    fromValues: (v) => v["config"],
    fromBase: (text) => YAML.parse(String(text)) as unknown,
  },
  { kind: "Deployment", name: "gearbox-extproc", path: ["spec", "replicas"], ...direct("extproc.replicas") },
  { kind: "Deployment", name: "gearbox-extproc", path: [...container, "image"], ...image("image") },
  { kind: "Deployment", name: "gearbox-extproc", path: [...container, "resources"], ...direct("extproc.resources") },
  { kind: "Deployment", name: "gearbox-extproc", path: secretName("REDIS_URL"), ...direct("secrets.redis") },
  { kind: "Deployment", name: "gearbox-extproc", path: secretName("GEARBOX_ADMIN_KEY"), ...direct("secrets.admin") },
  { kind: "Deployment", name: "gearbox-extproc", path: [...container, "envFrom", 0, "secretRef", "name"], ...direct("secrets.providerKeys") },
  { kind: "Deployment", name: "gearbox-xds", path: [...container, "image"], ...image("image") },
  { kind: "Deployment", name: "gearbox-xds", path: [...container, "resources"], ...direct("xds.resources") },
  { kind: "DaemonSet", name: "gearbox-edge-agent-gpu", path: [...container, "image"], ...image("edgeAgent.image") },
  { kind: "DaemonSet", name: "gearbox-edge-agent-arm64", path: [...container, "image"], ...image("edgeAgent.image") },
  { kind: "EnvoyFilter", name: "gearbox-ext-proc", path: ["spec", "workloadSelector", "labels"], ...direct("intercept.workloadLabels") },
  { kind: "EnvoyFilter", name: "gearbox-ext-proc", path: [...extProc, "observability_mode"], ...direct("shadow") },
  // Shadow fails open: Envoy applies failure_mode_allow to a failed stream even when observing.
  { kind: "EnvoyFilter", name: "gearbox-ext-proc", path: [...extProc, "failure_mode_allow"], ...direct("shadow") },
  { kind: "EnvoyFilter", name: "gearbox-ext-proc", path: [...extProc, "processing_mode", "request_body_mode"], ...bodyMode },
  { kind: "EnvoyFilter", name: "gearbox-ext-proc", path: [...extProc, "processing_mode", "response_body_mode"], ...bodyMode },
];

/** Documents present only when a value is true. */
const CONDITIONS: ReadonlyArray<{ kind: string; name: string; when: string }> = [
  { kind: "DaemonSet", name: "gearbox-edge-agent-gpu", when: ".Values.edgeAgent.enabled" },
  { kind: "DaemonSet", name: "gearbox-edge-agent-arm64", when: ".Values.edgeAgent.enabled" },
];

/** The provider whose documents and items serve as the loop body. */
const TEMPLATE_PROVIDER = { name: "openai", host: "api.openai.com" };

/** Follows `steps` in a document; the parent and key of the last step. */
function locate(doc: unknown, steps: readonly Step[]): { parent: Record<string, unknown> | unknown[]; key: string | number } {
  let node: unknown = doc;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i] as Step;
    const key = typeof step === "object" ? arr(node).findIndex((item) => obj(item)["name"] === step.name) : step;
    if (key === -1) throw new Error(`no item named ${JSON.stringify(step)} at step ${i}`);
    if (i === steps.length - 1) return { parent: node as Record<string, unknown>, key };
    node = (node as Record<string | number, unknown>)[key];
    if (node === undefined) throw new Error(`nothing at step ${i} (${String(key)})`);
  }
  throw new Error("empty path");
}

/** The value at `steps` in a document. */
export function getAt(doc: unknown, steps: readonly Step[]): unknown {
  const { parent, key } = locate(doc, steps);
  return (parent as Record<string | number, unknown>)[key];
}

function setAt(doc: unknown, steps: readonly Step[], value: unknown): void {
  const { parent, key } = locate(doc, steps);
  (parent as Record<string | number, unknown>)[key] = value;
}

const sentinel = (kind: "V" | "R", n: number): string => `GBX${kind}${n}GBX`;

/** Replaces the template provider's host and name by a loop variable's. */
function perProvider(text: string, variable: string): string {
  return text
    .split(TEMPLATE_PROVIDER.host)
    .join(`{{ ${variable}.host }}`)
    .replace(new RegExp(`\\b${TEMPLATE_PROVIDER.name}\\b`, "g"), `{{ ${variable}.name }}`);
}

/** Items of an array that belong to the template provider (the loop body); other providers' are dropped. */
interface RangedArray {
  readonly kind: string;
  readonly path: readonly Step[];
  /** The provider an item belongs to, if any. */
  readonly providerOf: (item: unknown, hosts: ReadonlyMap<string, string>) => string | undefined;
}

const RANGED_ARRAYS: readonly RangedArray[] = [
  {
    kind: "VirtualService",
    path: ["spec", "http"],
    providerOf: (item, hosts) => [...hosts.keys()].find((p) => obj(item)["name"] === `gearbox-to-${p}`),
  },
  {
    kind: "EnvoyFilter",
    path: ["spec", "configPatches"],
    providerOf: (item, hosts) =>
      [...hosts].find(([, host]) =>
        String(
          obj(obj(obj(item)["match"])["routeConfiguration"])["vhost"] && obj(obj(obj(obj(item)["match"])["routeConfiguration"])["vhost"])["name"],
        ).startsWith(`${host}:`),
      )?.[0],
  },
];

function toYaml(value: unknown): string {
  return YAML.stringify(value, { lineWidth: 0, aliasDuplicateObjects: false });
}

/** One base document as template text. `loopVar` is set for per-provider documents. */
function templateOf(doc: Manifest, hosts: ReadonlyMap<string, string>, loopVar: string | undefined): string {
  const copy = structuredClone(doc);
  const exprs = new Map<string, string>();
  BINDINGS.filter((b) => b.kind === doc.kind && b.name === doc.metadata.name).forEach((b) => {
    const mark = sentinel("V", exprs.size);
    exprs.set(mark, `{{ toJson (${b.expr}) }}`);
    setAt(copy, b.path, mark);
  });
  const loops = new Map<string, string>();
  for (const ranged of RANGED_ARRAYS.filter((r) => r.kind === doc.kind)) {
    const items = arr(getAt(copy, ranged.path));
    const kept: unknown[] = [];
    for (const item of items) {
      const owner = ranged.providerOf(item, hosts);
      if (owner === undefined) kept.push(item);
      else if (owner === TEMPLATE_PROVIDER.name) {
        const mark = sentinel("R", loops.size);
        loops.set(mark, perProvider(toYaml([item]).trimEnd(), "$q"));
        kept.push(mark);
      }
    }
    setAt(copy, ranged.path, kept);
  }
  let text = toYaml(copy);
  if (loopVar) text = perProvider(text, loopVar);
  text = text
    .replace(/^(\s*namespace: )gearbox$/gm, "$1{{ $.Release.Namespace }}")
    .replace(/\.gearbox\.svc\.cluster\.local/g, ".{{ $.Release.Namespace }}.svc.cluster.local");
  for (const [mark, expr] of exprs) text = text.replace(mark, expr);
  for (const [mark, body] of loops) {
    text = text.replace(new RegExp(`^( *)- ${mark}$`, "m"), (_m, indent: string) => {
      const lines = body.split("\n").map((line) => indent + line);
      return `{{- range $q := $.Values.providers }}\n${lines.join("\n")}\n{{- end }}`;
    });
  }
  return text;
}

const GENERATED_HEADER = "# Generated from istio/base by test/istio/chart.ts (node istio/chart/generate.mjs). Do not edit.\n";

/** Provider name → host in the base (ServiceEntries labelled gearbox.dev/provider). */
export function baseProviders(docs: readonly Manifest[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const d of docs) {
    const p = d.metadata.labels?.["gearbox.dev/provider"];
    if (d.kind === "ServiceEntry" && p) out.set(p, String(arr(obj(d["spec"])["hosts"])[0]));
  }
  return out;
}

/** File name → content of every generated template, from the rendered base. */
export function generateTemplates(docs: readonly Manifest[] = renderKustomize("istio/base")): Map<string, string> {
  const hosts = baseProviders(docs);
  const files = new Map<string, string>();
  const providerDocs: string[] = [];
  for (const doc of docs) {
    if (doc.kind === "Namespace") continue; // helm install --create-namespace
    const provider = doc.metadata.labels?.["gearbox.dev/provider"];
    if (provider !== undefined) {
      if (provider === TEMPLATE_PROVIDER.name)
        providerDocs.push(`{{- range $p := .Values.providers }}\n---\n${templateOf(doc, hosts, "$p").trimEnd()}\n{{- end }}\n`);
      continue;
    }
    let text = templateOf(doc, hosts, undefined);
    // The interception filter goes to each namespace chosen; the header strip stays mesh-wide.
    if (doc.kind === "EnvoyFilter" && doc.metadata.name === "gearbox-ext-proc") {
      text = text.replace(/^(\s*namespace: ).*$/m, "$1{{ $ns }}");
      text = `{{- range $ns := .Values.intercept.namespaces }}\n---\n${text.trimEnd()}\n{{- end }}\n`;
    }
    const condition = CONDITIONS.find((c) => c.kind === doc.kind && c.name === doc.metadata.name);
    if (condition) text = `{{- if ${condition.when} }}\n${text.trimEnd()}\n{{- end }}\n`;
    files.set(`${doc.metadata.name}-${doc.kind.toLowerCase()}.yaml`, GENERATED_HEADER + text);
  }
  files.set("providers.yaml", GENERATED_HEADER + providerDocs.join(""));
  return files;
}

/** Writes the templates, removing generated files that no longer exist. */
export function writeTemplates(files: ReadonlyMap<string, string>): void {
  mkdirSync(TEMPLATES_DIR, { recursive: true });
  for (const name of readdirSync(TEMPLATES_DIR)) if (!HAND_WRITTEN.includes(name) && !files.has(name)) rmSync(path.join(TEMPLATES_DIR, name));
  for (const [name, text] of files) writeFileSync(path.join(TEMPLATES_DIR, name), text);
}

/** The committed chart's values.yaml. */
export function chartValues(): Values {
  return YAML.parse(readFileSync(path.join(CHART_DIR, "values.yaml"), "utf8")) as Values;
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes("--write")) {
  const files = generateTemplates();
  writeTemplates(files);
  console.log(`wrote ${files.size} templates to ${path.relative(process.cwd(), TEMPLATES_DIR)}`);
}
