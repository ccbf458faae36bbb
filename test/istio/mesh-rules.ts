/**
 * Rules of Istio and Envoy that a manifest can break while still validating and parsing: checked
 * on rendered manifests (a list of errors; empty when all hold). Each rule says where in Istio or
 * Envoy it comes from; kustomize.test.ts covers what the manifests say about themselves.
 *
 * - A DestinationRule applies to a caller only when Istio finds it: in the caller's namespace, the
 *   service's namespace or the root namespace, in that order (Istio's "Destination rule lookup
 *   path"; exportTo may narrow it). Gearbox's rules must reach callers in every namespace.
 * - TLS origination names the server it expects: Istio turns on automatic SAN validation only
 *   when `sni` is empty (ClusterBuilder setAutoSniAndAutoSanValidation), so a rule that sets `sni`
 *   must list `subjectAltNames`, or the chain is checked but not the name.
 * - A shadow (observability_mode) ext_proc fails open: Envoy's onGrpcError reads
 *   failure_mode_allow alone, so a shadow filter left fail-closed fails the calls it only watches.
 * - Every VirtualService route that forwards sets `retries`: without them Istio applies its default
 *   (pilot route/retry DefaultPolicy: 2 retries on connect-failure, refused-stream, unavailable,
 *   cancelled and, before 1.24, 503), which repeats LLM calls. The edge route never retries (the
 *   cascade upgrades a failed edge answer); routes that carry the app's own call retry only what
 *   never left the proxy.
 * - Which ext_proc processing mode a request gets is decided by the route it first matches (Envoy
 *   ext_proc reads per-route config once, at decodeHeaders, before Gearbox clears the route
 *   cache): calls Gearbox processes are BUFFERED, paths it passes through untouched carry no body
 *   to it (no 413 at the 8 MiB buffer for files, audio, uploads).
 */
import { allEndpoints } from "../../extproc/endpoints/registry.ts";
import { EDGE_HOST } from "./edge-cluster.ts";
import { parseEnvoyFilterPatches } from "./envoy-patches.ts";
import { arr, obj, ofKind, type Manifest } from "./manifests.ts";

/** Istio's default root namespace (meshConfig.rootNamespace). */
export const ROOT_NAMESPACE = "istio-system";
const EXT_PROC = "envoy.filters.http.ext_proc";
/** retryOn conditions that fire only when the request never left the proxy. */
const BEFORE_SENT = new Set(["connect-failure", "refused-stream", "reset-before-request"]);

/** Paths of provider APIs Gearbox does not process, with bodies or answers far above 8 MiB. */
export const UNPROCESSED_SAMPLES = [
  "/v1/files",
  "/v1/files/file-abc/content",
  "/v1/uploads/upload-abc/parts",
  "/v1/audio/transcriptions",
  "/v1/audio/speech",
  "/v1/images/edits",
  "/v1/batches",
  "/v1/messages/batches",
  "/upload/v1beta/files",
  "/v1beta/files",
] as const;

/** Paths of LLM calls Gearbox decides on from the whole body (its ext_proc endpoints). */
export const processedPaths = (): string[] => allEndpoints().map((e) => e.path);

const spec = (d: Manifest): Record<string, unknown> => obj(d["spec"]);
const where = (d: Manifest): string => `${d.kind} ${d.metadata.namespace ?? ""}/${d.metadata.name}`;

/** The namespace Istio treats as a host's own: its ServiceEntry's, or the Service's in its FQDN. */
function serviceNamespace(docs: readonly Manifest[], host: string): string | undefined {
  const entry = ofKind(docs, "ServiceEntry").find((se) => arr(spec(se)["hosts"]).includes(host));
  if (entry) return entry.metadata.namespace;
  return /^[^.]+\.([^.]+)\.svc\.cluster\.local$/.exec(host)?.[1];
}

/** Every DestinationRule is found by callers in every namespace. */
export function destinationRulesReachEveryCaller(docs: readonly Manifest[]): string[] {
  const errors: string[] = [];
  for (const dr of ofKind(docs, "DestinationRule")) {
    const host = String(spec(dr)["host"]);
    const own = serviceNamespace(docs, host);
    const ns = dr.metadata.namespace;
    if (own === undefined) errors.push(`${where(dr)}: host ${host} is neither a ServiceEntry here nor <svc>.<ns>.svc.cluster.local`);
    else if (ns !== own && ns !== ROOT_NAMESPACE)
      errors.push(
        `${where(dr)}: applies only to callers in ${String(ns)}; put it in ${own === ROOT_NAMESPACE ? own : `${own} or ${ROOT_NAMESPACE}`} (the service's namespace or the root namespace)`,
      );
    const exportTo = spec(dr)["exportTo"];
    if (exportTo !== undefined && !arr(exportTo).includes("*"))
      errors.push(`${where(dr)}: exportTo ${JSON.stringify(exportTo)} hides it from other namespaces`);
  }
  return errors;
}

/** Every TLS origination checks the server's name. */
export function tlsOriginationChecksTheName(docs: readonly Manifest[]): string[] {
  const errors: string[] = [];
  for (const dr of ofKind(docs, "DestinationRule")) {
    const policy = obj(spec(dr)["trafficPolicy"]);
    const settings = [
      { at: "trafficPolicy.tls", tls: obj(policy["tls"]) },
      ...arr(policy["portLevelSettings"]).map((s, i) => ({ at: `trafficPolicy.portLevelSettings[${i}].tls`, tls: obj(obj(s)["tls"]) })),
    ];
    for (const { at, tls } of settings) {
      if (tls["mode"] !== "SIMPLE" && tls["mode"] !== "MUTUAL") continue;
      const sni = tls["sni"];
      const sans = arr(tls["subjectAltNames"]);
      if (typeof sni === "string" && !sans.includes(sni))
        errors.push(`${where(dr)}: ${at}: sni without subjectAltNames [${sni}] turns off Istio's SAN check (the certificate's name is never verified)`);
    }
  }
  return errors;
}

/** The ext_proc filter config(s) an EnvoyFilter inserts, parsed. */
function extProcConfigs(filter: Manifest): Record<string, unknown>[] {
  return parseEnvoyFilterPatches(filter)
    .filter((p) => p.applyTo === "HTTP_FILTER" && p.plain?.["name"] === EXT_PROC)
    .map((p) => obj(p.plain?.["typed_config"]));
}

/** An ext_proc in observability mode never fails closed. */
export function shadowFailsOpen(docs: readonly Manifest[]): string[] {
  const errors: string[] = [];
  for (const filter of ofKind(docs, "EnvoyFilter")) {
    for (const config of extProcConfigs(filter)) {
      if (config["observability_mode"] === true && config["failure_mode_allow"] !== true) {
        errors.push(`${where(filter)}: observability_mode with failure_mode_allow false: an unreachable Gearbox fails every call it only observes`);
      }
    }
  }
  return errors;
}

type Route = Record<string, unknown>;
const destinations = (route: Route): string[] => arr(route["route"]).map((r) => String(obj(obj(r)["destination"])["host"]));
const needsUpstreamHeader = (route: Route): boolean => arr(route["match"]).some((m) => "x-gearbox-upstream" in obj(obj(m)["headers"]));

/** Every forwarding route says how it retries (see the file comment). */
export function retriesExplicit(docs: readonly Manifest[]): string[] {
  const errors: string[] = [];
  for (const vs of ofKind(docs, "VirtualService")) {
    arr(spec(vs)["http"])
      .map(obj)
      .forEach((route, i) => {
        if (destinations(route).length === 0) return; // directResponse / redirect: nothing forwarded
        const at = `${where(vs)}: http[${i}] (${String(route["name"])})`;
        const retries = route["retries"];
        if (retries === undefined) return void errors.push(`${at}: no retries: Istio's default (2 retries, 503 included before 1.24) repeats LLM calls`);
        const attempts = Number(obj(retries)["attempts"] ?? 0);
        const on = obj(retries)["retryOn"];
        const retryOn = (typeof on === "string" ? on : "")
          .split(",")
          .map((c) => c.trim())
          .filter((c) => c !== "");
        if (destinations(route).includes(EDGE_HOST)) {
          if (attempts !== 0) errors.push(`${at}: the edge route must not retry (attempts: 0): Gearbox's cascade upgrades a failed edge answer`);
          return;
        }
        if (needsUpstreamHeader(route)) return; // a provider Gearbox chose: kustomize.test.ts checks its policy
        if (attempts > 1) errors.push(`${at}: the app's own call is retried at most once`);
        if (attempts > 0 && retryOn.length === 0) errors.push(`${at}: retryOn empty: Istio keeps its default conditions (503 included)`);
        for (const c of retryOn) if (!BEFORE_SENT.has(c)) errors.push(`${at}: retryOn '${c}' may repeat a call that reached the upstream`);
      });
  }
  return errors;
}

/** Whether an Istio HTTPMatchRequest list selects a request (uri prefix/exact, headers exact, withoutHeaders). */
function vsMatches(route: Route, path: string, headers: ReadonlyMap<string, string>): boolean {
  const matches = arr(route["match"]).map(obj);
  if (matches.length === 0) return true;
  return matches.some((m) => {
    const uri = obj(m["uri"]);
    if (typeof uri["prefix"] === "string" && !path.startsWith(uri["prefix"])) return false;
    if (typeof uri["exact"] === "string" && path !== uri["exact"]) return false;
    if ("regex" in uri) throw new Error(`${String(route["name"])}: uri regex is not evaluated here`);
    for (const [name, want] of Object.entries(obj(m["headers"]))) if (headers.get(name) !== obj(want)["exact"]) return false;
    for (const name of Object.keys(obj(m["withoutHeaders"]))) if (headers.has(name)) return false;
    return true;
  });
}

/**
 * For each provider host, the route a request first matches (no Gearbox header yet) and the
 * ext_proc processing mode that route gives it: the filter's, overridden by an HTTP_ROUTE patch's
 * ExtProcPerRoute on that route name.
 */
export function firstMatch(
  docs: readonly Manifest[],
  host: string,
  path: string,
): { route: Route | undefined; mode: Record<string, unknown>; observing: boolean } {
  const vs = ofKind(docs, "VirtualService").find((v) => v.metadata.labels?.["gearbox.dev/provider"] && arr(spec(v)["hosts"]).includes(host));
  const route = arr(spec(vs ?? ({} as Manifest))["http"])
    .map(obj)
    .find((r) => vsMatches(r, path, new Map()));
  const [filter] = ofKind(docs, "EnvoyFilter", "gearbox-ext-proc");
  const patches = filter ? parseEnvoyFilterPatches(filter) : [];
  const config = obj(patches.find((p) => p.applyTo === "HTTP_FILTER" && p.plain?.["name"] === EXT_PROC)?.plain?.["typed_config"]);
  const base = obj(config["processing_mode"]);
  const perRoute = patches.find(
    (p) => p.applyTo === "HTTP_ROUTE" && obj(obj(obj(p.match["routeConfiguration"])["vhost"])["route"])["name"] === route?.["name"],
  );
  const override = obj(obj(obj(obj(obj(perRoute?.plain?.["typed_per_filter_config"])[EXT_PROC])["config"])["overrides"])["processing_mode"]);
  return { route, mode: Object.keys(override).length > 0 ? override : base, observing: config["observability_mode"] === true };
}

/** Calls Gearbox processes are buffered whole; paths it passes through send it no body. */
export function bodiesOnlyWhereProcessed(docs: readonly Manifest[]): string[] {
  const errors: string[] = [];
  const hosts = ofKind(docs, "ServiceEntry")
    .filter((se) => se.metadata.labels?.["gearbox.dev/provider"])
    .map((se) => String(arr(spec(se)["hosts"])[0]));
  for (const host of hosts) {
    for (const path of processedPaths()) {
      const { route, mode, observing } = firstMatch(docs, host, path);
      // Observability mode streams bodies only ("Only STREAMED body processing mode is supported").
      const whole = observing ? "STREAMED" : "BUFFERED";
      if (mode["request_body_mode"] !== whole)
        errors.push(
          `${host}${path}: route ${String(route?.["name"])} gives Gearbox request body ${String(mode["request_body_mode"])}, it needs the whole body (${whole})`,
        );
    }
    for (const path of UNPROCESSED_SAMPLES) {
      const { route, mode } = firstMatch(docs, host, path);
      for (const key of ["request_body_mode", "response_body_mode"]) {
        if (mode[key] !== "NONE")
          errors.push(
            `${host}${path}: route ${String(route?.["name"])}: ${key} ${String(mode[key])}: Gearbox passes this path through, and buffering cuts it at 8 MiB (413)`,
          );
      }
      if (route && !destinations(route).every((h) => h === host))
        errors.push(
          `${host}${path}: route ${String(route["name"])} must go to the host the app called, goes to ${destinations(route).join(", ") || "nowhere"}`,
        );
    }
  }
  return errors;
}
