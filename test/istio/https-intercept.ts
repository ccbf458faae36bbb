/**
 * Rules for HTTPS interception in the mesh (istio/components/https-intercept with
 * istio/components/trust), as functions returning problems, so the tests can show each one
 * failing on a broken copy of the manifests.
 *
 * What must hold, given how Istio builds a sidecar's outbound port-443 listener (one
 * pass-through filter chain per TLS ServiceEntry host, matched on the SNI) and how EnvoyFilter
 * FILTER_CHAIN patches apply (REMOVE on a matched chain; ADD appends a whole chain that no other
 * patch touches afterwards, so it must carry everything itself):
 * - per provider host: its pass-through chain removed and a TLS-terminating chain for exactly
 *   that SNI added, no chain for a host that is not a provider;
 * - the leaf from a file SDS source in the directory where the trust component mounts the
 *   host's leaf Secret into istio-proxy (and only there), watched, so rotation reloads it;
 * - the chain's HTTP filters are the base's header strip and ext_proc (the same configs), a
 *   check that :authority is the terminated SNI, and the router, on Istio's port-80 routes;
 * - upstream TLS is verified: SIMPLE, sni and subjectAltNames = host, system roots named.
 */
import { leafSecretName } from "../../cli/ca/main.ts";
import { envoyRoot } from "../envoy/envoy-root.ts";
import { isPlainObject, type PlainObject } from "../envoy/plain.ts";
import { protoFromJson } from "../envoy/proto-json.ts";
import { parseEnvoyFilterPatches, type ParsedPatch } from "./envoy-patches.ts";
import { arr, obj, ofKind, type Manifest } from "./manifests.ts";
import YAML from "yaml";

export const HTTPS_FILTER = "gearbox-https-intercept";
export const SYSTEM_ROOTS = "/etc/ssl/certs/ca-certificates.crt";
const EXT_PROC = "envoy.filters.http.ext_proc";
const STRIP = "gearbox.strip-routing-headers";
const SNI_CHECK = "gearbox.sni-is-authority";
const ROUTER = "envoy.filters.http.router";

/** Provider hosts: the ServiceEntries labelled gearbox.dev/provider. */
export function providerHosts(docs: readonly Manifest[]): string[] {
  return ofKind(docs, "ServiceEntry")
    .filter((se) => se.metadata.labels?.["gearbox.dev/provider"])
    .map((se) => String(arr(obj(se["spec"])["hosts"])[0]));
}

const at = (value: unknown, ...keys: Array<string | number>): unknown => keys.reduce<unknown>((v, k) => (typeof k === "number" ? arr(v)[k] : obj(v)[k]), value);

/** The HTTP filter `name` of a parsed filter chain's HttpConnectionManager. */
function httpFilter(chain: PlainObject, name: string): PlainObject | undefined {
  return arr(at(chain, "filters", 0, "typed_config", "http_filters"))
    .map(obj)
    .find((f) => f["name"] === name);
}

/** The parsed patch of the base's EnvoyFilter `name` inserting HTTP filter `filter`. */
function baseInsert(docs: readonly Manifest[], name: string, filter: string): PlainObject | undefined {
  const [doc] = ofKind(docs, "EnvoyFilter", name);
  return doc && parseEnvoyFilterPatches(doc).find((p) => p.applyTo === "HTTP_FILTER" && p.plain?.["name"] === filter)?.plain;
}

/** (SNI, :authority) pairs the RBAC filter allows. */
function allowedPairs(rbac: PlainObject | undefined): string[] {
  const policies = Object.values(obj(at(rbac, "typed_config", "rules", "policies")));
  if (at(rbac, "typed_config", "rules", "action") !== undefined && at(rbac, "typed_config", "rules", "action") !== "ALLOW") return [];
  return policies.flatMap((policy) =>
    arr(obj(policy)["permissions"]).flatMap((perm) =>
      arr(at(perm, "or_rules", "rules")).map((rule) => {
        const parts = arr(at(rule, "and_rules", "rules")).map(obj);
        const sni = at(
          parts.find((p) => p["requested_server_name"]),
          "requested_server_name",
          "exact",
        );
        const header = obj(parts.find((p) => p["header"])?.["header"]);
        const authority = header["name"] === ":authority" ? at(header, "string_match", "exact") : undefined;
        return `${String(sni)} ${String(authority)}`;
      }),
    ),
  );
}

/** The pod labels gearbox-https-intercept selects. */
export function httpsSelector(docs: readonly Manifest[]): PlainObject {
  return obj(obj(obj(ofKind(docs, "EnvoyFilter", HTTPS_FILTER)[0]?.["spec"])["workloadSelector"])["labels"]);
}

/** Problems of the mesh side: the EnvoyFilter and the DestinationRules. */
export function meshProblems(docs: readonly Manifest[]): string[] {
  const problems: string[] = [];
  const [filter] = ofKind(docs, "EnvoyFilter", HTTPS_FILTER);
  if (!filter) return [`no EnvoyFilter ${HTTPS_FILTER}`];
  const hosts = providerHosts(docs);
  const [extProcFilter] = ofKind(docs, "EnvoyFilter", "gearbox-ext-proc");
  // Its pods must be gearbox-ext-proc's too (ext_proc is switched on in their port-80 routes),
  // and only those the trust component gave leaves (a label gearbox-ext-proc does not need).
  const selector = httpsSelector(docs);
  const extProcSelector = obj(obj(obj(extProcFilter?.["spec"])["workloadSelector"])["labels"]);
  for (const [k, v] of Object.entries(extProcSelector))
    if (selector[k] !== v) problems.push(`${HTTPS_FILTER}: selects pods without ${k}: ${String(v)} (no ext_proc)`);
  if (Object.keys(selector).length <= Object.keys(extProcSelector).length)
    problems.push(`${HTTPS_FILTER}: selects every pod gearbox-ext-proc does, also those with no leaves mounted`);
  const patches = parseEnvoyFilterPatches(filter);
  problems.push(...patches.flatMap((p) => p.errors));
  const onPort443 = (p: ParsedPatch): boolean => at(p.match, "context") === "SIDECAR_OUTBOUND" && at(p.match, "listener", "portNumber") === 443;
  const added = patches.filter((p) => p.applyTo === "FILTER_CHAIN" && p.operation === "ADD");
  const removed = patches.filter((p) => p.applyTo === "FILTER_CHAIN" && p.operation === "REMOVE");
  for (const p of [...added, ...removed]) if (!onPort443(p)) problems.push(`${p.where}: not on the sidecar's outbound port 443`);
  const removedHosts = removed.map((p) => String(at(p.match, "listener", "filterChain", "sni")));
  const addedHosts = added.map((p) => arr(at(p.plain, "filter_chain_match", "server_names")).map(String));
  for (const names of addedHosts) if (names.length !== 1) problems.push(`a TLS chain serves ${names.length} names; one host per chain (its own leaf)`);
  for (const host of addedHosts.flat()) if (!hosts.includes(host)) problems.push(`${host}: a TLS chain for a host that is not a provider ServiceEntry`);
  for (const host of hosts) {
    if (addedHosts.flat().filter((h) => h === host).length !== 1) problems.push(`${host}: needs exactly one TLS-terminating chain`);
    if (!removedHosts.includes(host)) problems.push(`${host}: Istio's pass-through chain for its SNI is not removed (it would win the match)`);
    const se = ofKind(docs, "ServiceEntry").find((d) => arr(obj(d["spec"])["hosts"]).includes(host));
    const tlsPort = arr(obj(se?.["spec"])["ports"])
      .map(obj)
      .find((p) => p["number"] === 443);
    if (tlsPort?.["protocol"] !== "TLS") problems.push(`${host}: its ServiceEntry needs port 443 with protocol TLS (the SNI chain Istio builds)`);
  }
  for (const host of removedHosts) if (!addedHosts.flat().includes(host)) problems.push(`${host}: pass-through chain removed with no TLS chain in its place`);

  const strip = baseInsert(docs, "gearbox-strip-routing-headers", STRIP);
  const extProc = baseInsert(docs, "gearbox-ext-proc", EXT_PROC);
  for (const [i, p] of added.entries()) {
    const chain = p.plain ?? {};
    const host = addedHosts[i]?.[0] ?? "?";
    const context = obj(at(chain, "transport_socket", "typed_config"));
    if (context["@type"] !== "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext")
      problems.push(`${host}: the chain does not terminate TLS`);
    const sds = arr(at(context, "common_tls_context", "tls_certificate_sds_secret_configs")).map(obj);
    const source = obj(at(sds[0], "sds_config", "path_config_source"));
    if (sds.length !== 1 || sds[0]?.["name"] !== host) problems.push(`${host}: needs one SDS secret named after its host`);
    if (source["path"] !== `/etc/gearbox/intercept-sds/${host}.yaml`)
      problems.push(`${host}: SDS file ${String(source["path"])} is not /etc/gearbox/intercept-sds/${host}.yaml`);
    if (at(source, "watched_directory", "path") !== `/etc/gearbox/intercept/${host}`)
      problems.push(`${host}: the SDS source must watch /etc/gearbox/intercept/${host} (rotation without restart)`);
    const hcm = obj(at(chain, "filters", 0, "typed_config"));
    if (at(hcm, "rds", "route_config_name") !== "80")
      problems.push(`${host}: the chain must use Istio's port-80 routes (RDS "80"), where ext_proc is switched on`);
    const names = arr(hcm["http_filters"]).map((f) => obj(f)["name"]);
    if (JSON.stringify(names) !== JSON.stringify([STRIP, SNI_CHECK, EXT_PROC, ROUTER]))
      problems.push(`${host}: HTTP filters ${JSON.stringify(names)}, want ${JSON.stringify([STRIP, SNI_CHECK, EXT_PROC, ROUTER])}`);
    if (JSON.stringify(httpFilter(chain, STRIP)) !== JSON.stringify(strip))
      problems.push(`${host}: the header strip differs from gearbox-strip-routing-headers`);
    if (JSON.stringify(httpFilter(chain, EXT_PROC)) !== JSON.stringify(extProc)) problems.push(`${host}: ext_proc differs from gearbox-ext-proc's`);
    const pairs = allowedPairs(httpFilter(chain, SNI_CHECK));
    if (!pairs.includes(`${host} ${host}`)) problems.push(`${host}: the :authority check does not allow ${host} on its own SNI`);
    for (const pair of pairs) {
      const [sni, authority] = pair.split(" ");
      if (sni !== authority) problems.push(`${host}: the :authority check lets SNI ${sni} carry :authority ${authority}`);
    }
    if (hcm["strip_any_host_port"] !== true) problems.push(`${host}: "${host}:443" would miss the port-80 virtual host (strip_any_host_port)`);
  }
  for (const host of hosts) {
    const dr = ofKind(docs, "DestinationRule").find((d) => obj(d["spec"])["host"] === host);
    const tls = obj(
      arr(obj(obj(dr?.["spec"])["trafficPolicy"])["portLevelSettings"])
        .map(obj)
        .find((s) => at(s, "port", "number") === 80)?.["tls"],
    );
    const want = { mode: "SIMPLE", sni: host, subjectAltNames: [host], caCertificates: SYSTEM_ROOTS };
    if (JSON.stringify(tls, Object.keys(want).sort()) !== JSON.stringify(want, Object.keys(want).sort()))
      problems.push(`${host}: upstream TLS ${JSON.stringify(tls)} does not verify the provider (want ${JSON.stringify(want)})`);
  }
  return problems;
}

/** A pod template's annotation holding a JSON array. */
function jsonAnnotation(template: PlainObject, key: string): PlainObject[] {
  const text = obj(obj(template["metadata"])["annotations"])[key];
  try {
    const parsed = JSON.parse(String(text)) as unknown;
    return Array.isArray(parsed) ? parsed.filter(isPlainObject) : [];
  } catch {
    return [];
  }
}

const WORKLOAD_KINDS = ["Deployment", "StatefulSet", "DaemonSet", "Job"];

/** The env and mounts every container of an opted-in workload must get. */
export const TRUST_ENV: Readonly<Record<string, string>> = {
  NODE_EXTRA_CA_CERTS: "/etc/gearbox/ca/gearbox-ca.crt",
  SSL_CERT_FILE: "/etc/gearbox/ca/ca-bundle.crt",
  REQUESTS_CA_BUNDLE: "/etc/gearbox/ca/ca-bundle.crt",
};

/**
 * Problems of the workload side (a kustomization that includes istio/components/trust): every
 * workload's pods carrying the labels `selector` (gearbox-https-intercept's) names, istio-proxy mounting each host's leaf Secret where the SDS files say,
 * the SDS files valid Envoy Secrets, every container trusting the bundle, and nothing
 * mounting the CA's own Secret.
 */
export function workloadProblems(docs: readonly Manifest[], hosts: readonly string[], bundleKeys: readonly string[], selector: PlainObject): string[] {
  const problems: string[] = [];
  const workloads = docs.filter((d) => WORKLOAD_KINDS.includes(d.kind));
  if (workloads.length === 0) problems.push("no workload rendered");
  const [sds] = ofKind(docs, "ConfigMap", "gearbox-intercept-sds");
  const sdsFiles = obj(sds?.["data"]);
  for (const host of hosts) {
    const file = sdsFiles[`${host}.yaml`];
    if (typeof file !== "string") {
      problems.push(`${host}: no SDS file in ConfigMap gearbox-intercept-sds`);
      continue;
    }
    const resources = arr(obj(YAML.parse(file))["resources"]).map(obj);
    const { "@type": type, ...secret } = resources[0] ?? {};
    const parsed = protoFromJson(envoyRoot(), "envoy.extensions.transport_sockets.tls.v3.Secret", secret);
    if (resources.length !== 1 || type !== "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret" || !parsed.ok)
      problems.push(`${host}: the SDS file is not one Envoy Secret${parsed.ok ? "" : `: ${parsed.errors.join("; ")}`}`);
    const dir = `/etc/gearbox/intercept/${host}`;
    if (
      secret["name"] !== host ||
      at(secret, "tls_certificate", "certificate_chain", "filename") !== `${dir}/tls.crt` ||
      at(secret, "tls_certificate", "private_key", "filename") !== `${dir}/tls.key`
    )
      problems.push(`${host}: the SDS file must name ${dir}/tls.crt and tls.key under the secret name ${host}`);
  }
  for (const w of workloads) {
    const name = `${w.kind} ${w.metadata.name}`;
    const template = obj(obj(w["spec"])["template"]);
    const pod = obj(template["spec"]);
    const labels = obj(obj(template["metadata"])["labels"]);
    for (const [k, v] of Object.entries(selector))
      if (labels[k] !== v) problems.push(`${name}: pods not labelled ${k}: ${String(v)} (${HTTPS_FILTER} would not apply)`);
    const proxyVolumes = jsonAnnotation(template, "sidecar.istio.io/userVolume");
    const proxyMounts = jsonAnnotation(template, "sidecar.istio.io/userVolumeMount");
    for (const host of hosts) {
      const volume = proxyVolumes.find((v) => at(v, "secret", "secretName") === leafSecretName(host));
      const mount = proxyMounts.find((m) => m["name"] === volume?.["name"]);
      if (!volume || mount?.["mountPath"] !== `/etc/gearbox/intercept/${host}` || mount["readOnly"] !== true)
        problems.push(`${name}: istio-proxy must mount Secret ${leafSecretName(host)} read-only at /etc/gearbox/intercept/${host}`);
    }
    const sdsVolume = proxyVolumes.find((v) => at(v, "configMap", "name") === "gearbox-intercept-sds");
    if (!sdsVolume || proxyMounts.find((m) => m["name"] === sdsVolume["name"])?.["mountPath"] !== "/etc/gearbox/intercept-sds")
      problems.push(`${name}: istio-proxy must mount ConfigMap gearbox-intercept-sds at /etc/gearbox/intercept-sds`);
    const podVolumes = arr(pod["volumes"]).map(obj);
    const containers = [...arr(pod["containers"]), ...arr(pod["initContainers"])].map(obj);
    // The app's containers see the public bundle only: a leaf key or the CA key in an app
    // container would let the app impersonate providers (or sign anything the CA may).
    for (const v of [...podVolumes, ...proxyVolumes]) {
      const secretName = at(v, "secret", "secretName");
      if (secretName === "gearbox-ca") problems.push(`${name}: mounts the CA's Secret gearbox-ca`);
      if (secretName !== undefined && podVolumes.includes(v)) problems.push(`${name}: an app container could mount Secret ${JSON.stringify(secretName)}`);
    }
    const init = containers.find((c) => c["name"] === "gearbox-truststore");
    const out = arr(init?.["env"])
      .map(obj)
      .find((e) => e["name"] === "OUT")?.["value"];
    if (!init || typeof out !== "string") problems.push(`${name}: no init container building the truststore`);
    const bundle = podVolumes.find((v) => v["name"] === "gearbox-ca");
    if (at(bundle, "configMap", "name") !== "gearbox-ca-bundle") problems.push(`${name}: volume gearbox-ca must be the ConfigMap gearbox-ca-bundle`);
    for (const c of arr(pod["containers"]).map(obj)) {
      const env = new Map(arr(c["env"]).map((e) => [String(obj(e)["name"]), obj(e)["value"]]));
      const mounts = new Map(arr(c["volumeMounts"]).map((m) => [String(obj(m)["name"]), obj(m)]));
      const caMount = mounts.get("gearbox-ca");
      if (caMount?.["mountPath"] !== "/etc/gearbox/ca" || caMount["readOnly"] !== true)
        problems.push(`${name}/${String(c["name"])}: bundle not mounted read-only at /etc/gearbox/ca`);
      for (const [key, want] of Object.entries(TRUST_ENV)) {
        if (env.get(key) !== want) problems.push(`${name}/${String(c["name"])}: ${key} is ${String(env.get(key))}, want ${want}`);
        if (!bundleKeys.includes(want.slice("/etc/gearbox/ca/".length))) problems.push(`${key}: ${want} is not a file of the bundle ConfigMap`);
      }
      const javaOptions = env.get("JAVA_TOOL_OPTIONS");
      const truststore = /-Djavax\.net\.ssl\.trustStore=(\S+)/.exec(typeof javaOptions === "string" ? javaOptions : "")?.[1];
      const storeMount = mounts.get("gearbox-truststore");
      if (!truststore || !storeMount || !truststore.startsWith(`${String(storeMount["mountPath"])}/`) || truststore !== out)
        problems.push(`${name}/${String(c["name"])}: JAVA_TOOL_OPTIONS must name the truststore the init container builds, on the gearbox-truststore mount`);
    }
  }
  return problems;
}
