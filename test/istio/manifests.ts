/**
 * Kubernetes and Istio manifests for the tests: rendering Kustomize directories with
 * `kubectl kustomize`, and validating each document against its typed model
 * (`kubernetes-models`, `@kubernetes-models/istio`).
 *
 * The models' `validate()` checks types, enums and required fields but lets unknown fields
 * through (their schemas do not set `additionalProperties: false`). A misspelt field is the
 * commonest manifest bug and Istio ignores it silently, so for the Istio kinds the schema the
 * model carries is walked once more here, rejecting any field it does not declare (like
 * `kubectl apply --validate=strict` would).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import * as apps from "kubernetes-models/apps/v1";
import * as batch from "kubernetes-models/batch/v1";
import * as core from "kubernetes-models/v1";
import * as policy from "kubernetes-models/policy/v1";
import * as istioV1alpha3 from "@kubernetes-models/istio/networking.istio.io/v1alpha3";
import * as istioV1beta1 from "@kubernetes-models/istio/networking.istio.io/v1beta1";
import * as securityV1beta1 from "@kubernetes-models/istio/security.istio.io/v1beta1";

export type Manifest = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
};

/** The repository root. */
export const REPO = fileURLToPath(new URL("../../", import.meta.url));

/** Kustomize directories that must render, relative to the repository root. */
export const KUSTOMIZATIONS = ["istio/base", "istio/overlays/shadow", "istio/overlays/egress-gateway", "istio/overlays/https-intercept"] as const;

/** Parses a multi-document YAML text; YAML errors (duplicate keys included) throw. */
export function parseManifests(text: string, source: string): Manifest[] {
  return parseAllDocuments(text, { uniqueKeys: true })
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${source}: ${doc.errors.map((e) => e.message).join("; ")}`);
      return doc.toJS() as unknown;
    })
    .filter((d): d is Manifest => typeof d === "object" && d !== null);
}

/** `kubectl kustomize <dir>` (repository-relative), parsed. */
export function renderKustomize(dir: string): Manifest[] {
  const text = execFileSync("kubectl", ["kustomize", dir], { cwd: REPO, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  return parseManifests(text, `kubectl kustomize ${dir}`);
}

/** One YAML file of the repository, parsed. */
export function readManifests(file: string): Manifest[] {
  return parseManifests(readFileSync(new URL(file, `file://${REPO}`), "utf8"), file);
}

interface ModelClass {
  new (data: Record<string, unknown>): { validate(): void };
}

const MODELS: Readonly<Record<string, ModelClass>> = {
  "v1/Namespace": core.Namespace,
  "v1/ConfigMap": core.ConfigMap,
  "v1/Secret": core.Secret,
  "v1/ServiceAccount": core.ServiceAccount,
  "v1/Service": core.Service,
  "apps/v1/Deployment": apps.Deployment,
  "apps/v1/DaemonSet": apps.DaemonSet,
  "apps/v1/StatefulSet": apps.StatefulSet,
  "batch/v1/Job": batch.Job,
  "policy/v1/PodDisruptionBudget": policy.PodDisruptionBudget,
  "networking.istio.io/v1alpha3/EnvoyFilter": istioV1alpha3.EnvoyFilter,
  "networking.istio.io/v1beta1/ServiceEntry": istioV1beta1.ServiceEntry,
  "networking.istio.io/v1beta1/DestinationRule": istioV1beta1.DestinationRule,
  "networking.istio.io/v1beta1/VirtualService": istioV1beta1.VirtualService,
  "networking.istio.io/v1beta1/Gateway": istioV1beta1.Gateway,
  "security.istio.io/v1beta1/PeerAuthentication": securityV1beta1.PeerAuthentication,
};

/** Module paths of the Istio models, whose files carry their OpenAPI schema as a literal. */
const ISTIO_MODULES: Readonly<Record<string, string>> = {
  "networking.istio.io/v1alpha3/EnvoyFilter": "@kubernetes-models/istio/networking.istio.io/v1alpha3/EnvoyFilter",
  "networking.istio.io/v1beta1/ServiceEntry": "@kubernetes-models/istio/networking.istio.io/v1beta1/ServiceEntry",
  "networking.istio.io/v1beta1/DestinationRule": "@kubernetes-models/istio/networking.istio.io/v1beta1/DestinationRule",
  "networking.istio.io/v1beta1/VirtualService": "@kubernetes-models/istio/networking.istio.io/v1beta1/VirtualService",
  "networking.istio.io/v1beta1/Gateway": "@kubernetes-models/istio/networking.istio.io/v1beta1/Gateway",
  "security.istio.io/v1beta1/PeerAuthentication": "@kubernetes-models/istio/security.istio.io/v1beta1/PeerAuthentication",
};

interface Schema {
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
}

const require = createRequire(import.meta.url);
const schemas = new Map<string, Schema>();

/** The schema literal in a model's module file (`const schema = {…};`). */
function istioSchema(key: string, module: string): Schema {
  const cached = schemas.get(key);
  if (cached) return cached;
  const text = readFileSync(require.resolve(module), "utf8");
  const start = text.indexOf("const schema = ");
  const end = text.indexOf("\n};\n", start);
  if (start < 0 || end < 0) throw new Error(`${module}: no schema literal found (model package changed?)`);
  const schema = JSON.parse(text.slice(start + "const schema = ".length, end + 2)) as Schema;
  schemas.set(key, schema);
  return schema;
}

/** Fields the schema does not declare. An empty `properties` is a free-form object (a Struct). */
function unknownFields(schema: Schema, value: unknown, at: string, out: string[]): void {
  const alternatives = [...(schema.oneOf ?? []), ...(schema.anyOf ?? []), ...(schema.allOf ?? [])];
  if (Array.isArray(value)) {
    if (schema.items) value.forEach((item, i) => unknownFields(schema.items as Schema, item, `${at}[${i}]`, out));
    return;
  }
  if (typeof value !== "object" || value === null) return;
  const declared: Record<string, Schema> = { ...schema.properties };
  for (const alt of alternatives) Object.assign(declared, alt.properties);
  const mapOf = typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined;
  const freeForm = Object.keys(declared).length === 0 && !mapOf;
  for (const [key, child] of Object.entries(value)) {
    const sub = declared[key] ?? mapOf;
    if (sub) unknownFields(sub, child, `${at}.${key}`, out);
    else if (!freeForm && schema.additionalProperties !== true) out.push(`${at}.${key}: unknown field`);
  }
}

/** Problems of one manifest: no model for its kind, the model's validation, unknown Istio fields. */
export function validateManifest(doc: Manifest): string[] {
  const key = `${doc.apiVersion}/${doc.kind}`;
  const name = `${doc.kind} ${doc.metadata?.namespace ?? ""}/${doc.metadata?.name ?? "?"}`;
  const Model = MODELS[key];
  if (!Model) return [`${name}: no typed model for ${key}`];
  const errors: string[] = [];
  try {
    new Model(doc).validate();
  } catch (err) {
    errors.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const module = ISTIO_MODULES[key];
  if (module) {
    const found: string[] = [];
    // metadata is Kubernetes' ObjectMeta ($ref), checked by the model itself.
    unknownFields(istioSchema(key, module), { ...doc, metadata: undefined }, "", found);
    errors.push(...found.map((e) => `${name}: ${e.slice(1)}`));
  }
  return errors;
}

/** The documents of `kind` (and `name`, when given). */
export function ofKind(docs: readonly Manifest[], kind: string, name?: string): Manifest[] {
  return docs.filter((d) => d.kind === kind && (name === undefined || d.metadata.name === name));
}

type Obj = Record<string, unknown>;
/** `value` as an object ({} otherwise), for walking parsed YAML. */
export const obj = (v: unknown): Obj => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Obj) : {});
/** `value` as an array ([] otherwise). */
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
