/**
 * envoy/sidecar.yaml's HTTPS interception listener (issue 26): what Envoy needs to terminate the
 * apps' TLS per provider host and run the same Gearbox chain; the SDS files parse as Envoy's
 * Secret. Each rule is shown failing on a broken copy.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import YAML from "yaml";
import { envoyRoot } from "./envoy-root.ts";
import { ENVOY_CONFIG_DIR, parseBootstrap, readEnvoyYaml } from "./load-config.ts";
import { arrayAt, objectAt, stringAt, type PlainObject } from "./plain.ts";
import { protoFromJson, toPlainObject } from "./proto-json.ts";

const DOWNSTREAM_TLS = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext";

function plain(json: unknown): PlainObject {
  const r = parseBootstrap(json);
  if (!r.ok) assert.fail(r.errors.join("\n"));
  return toPlainObject(r.type, r.message);
}

/** The interception listener's problems; [] when it holds. */
export function checkHttpsIntercept(bootstrap: PlainObject): string[] {
  const errors: string[] = [];
  const listeners = arrayAt(objectAt(bootstrap, "static_resources"), "listeners");
  const plainListener = listeners.find((l) => stringAt(l, "name") === "llm_egress");
  const tls = listeners.find((l) => stringAt(l, "name") === "llm_egress_tls");
  if (!tls || !plainListener) return ["llm_egress and llm_egress_tls must both exist"];
  const clusterSnis = new Set(
    arrayAt(objectAt(bootstrap, "static_resources"), "clusters").flatMap((c) => {
      const sni = stringAt(objectAt(objectAt(c, "transport_socket"), "typed_config"), "sni");
      return sni ? [sni] : [];
    }),
  );
  // Envoy only knows the SNI at filter-chain selection when tls_inspector has read the ClientHello.
  if (!arrayAt(tls, "listener_filters").some((f) => stringAt(f, "name") === "envoy.filters.listener.tls_inspector"))
    errors.push("llm_egress_tls: no tls_inspector listener filter (server_names would never match)");
  const referenceHcm = JSON.stringify(objectAt(arrayAt(arrayAt(plainListener, "filter_chains")[0], "filters")[0], "typed_config"));
  arrayAt(tls, "filter_chains").forEach((chain, i) => {
    const at = `llm_egress_tls.filter_chains[${i}]`;
    const names = arrayAt(objectAt(chain, "filter_chain_match"), "server_names").map(String);
    if (names.length !== 1) errors.push(`${at}: one server name per chain (one leaf per host), has ${names.length}`);
    for (const n of names) if (!clusterSnis.has(n)) errors.push(`${at}: ${n} is not the SNI of a provider cluster`);
    const ctx = objectAt(objectAt(chain, "transport_socket"), "typed_config");
    if (stringAt(ctx, "@type") !== DOWNSTREAM_TLS) errors.push(`${at}: transport_socket is not a DownstreamTlsContext`);
    const sds = arrayAt(objectAt(ctx, "common_tls_context"), "tls_certificate_sds_secret_configs");
    const source = objectAt(objectAt(sds[0], "sds_config"), "path_config_source");
    if (sds.length !== 1 || stringAt(sds[0], "name") !== names[0]) errors.push(`${at}: needs one SDS secret named after its host`);
    if (!stringAt(objectAt(source, "watched_directory"), "path")?.endsWith(`/${names[0]}`))
      errors.push(`${at}: the SDS source must watch the host's directory (rotation without restart)`);
    if (JSON.stringify(objectAt(arrayAt(chain, "filters")[0], "typed_config")) !== referenceHcm)
      errors.push(`${at}: its HTTP chain differs from llm_egress's (ext_proc, routing, stripping must be the same)`);
  });
  if (arrayAt(tls, "filter_chains").length === 0) errors.push("llm_egress_tls: no filter chain");
  if (objectAt(tls, "default_filter_chain")) errors.push("llm_egress_tls: a default_filter_chain would serve names Gearbox does not intercept");
  return errors;
}

void describe("envoy/sidecar.yaml HTTPS interception", () => {
  const config = () => readEnvoyYaml("sidecar.yaml") as PlainObject;
  const tlsListener = (c: PlainObject) =>
    arrayAt(objectAt(c, "static_resources"), "listeners").find((l) => stringAt(l, "name") === "llm_egress_tls") as PlainObject;

  void it("terminates TLS per provider host and runs llm_egress's chain", () => {
    assert.deepEqual(checkHttpsIntercept(plain(config())), []);
  });

  void it("each rule fails on a broken copy", () => {
    const noInspector = config();
    tlsListener(noInspector)["listener_filters"] = [];
    assert.match(checkHttpsIntercept(plain(noInspector)).join("\n"), /no tls_inspector/);
    const otherChain = config();
    const chain = arrayAt(tlsListener(otherChain), "filter_chains")[0] as PlainObject;
    const hcm = objectAt(arrayAt(chain, "filters")[0], "typed_config") as PlainObject;
    hcm["http_filters"] = arrayAt(hcm, "http_filters").filter((f) => stringAt(f, "name") !== "envoy.filters.http.ext_proc");
    assert.match(checkHttpsIntercept(plain(otherChain)).join("\n"), /differs from llm_egress/);
    const stranger = config();
    (objectAt(arrayAt(tlsListener(stranger), "filter_chains")[1], "filter_chain_match") as PlainObject)["server_names"] = ["example.com"];
    assert.match(checkHttpsIntercept(plain(stranger)).join("\n"), /example\.com is not the SNI of a provider cluster/);
  });

  void it("the SDS files parse as Envoy Secrets naming files in the watched directory", () => {
    const chains = arrayAt(tlsListener(config()), "filter_chains");
    assert.equal(chains.length, 3);
    for (const chain of chains) {
      const sds = arrayAt(
        objectAt(objectAt(objectAt(chain, "transport_socket"), "typed_config"), "common_tls_context"),
        "tls_certificate_sds_secret_configs",
      )[0];
      const source = objectAt(objectAt(sds, "sds_config"), "path_config_source");
      const file = path.join(ENVOY_CONFIG_DIR, "intercept-sds", path.basename(stringAt(source, "path") ?? ""));
      const doc = YAML.parse(readFileSync(file, "utf8")) as { resources: PlainObject[] };
      assert.equal(doc.resources.length, 1);
      const { "@type": type, ...secret } = doc.resources[0] ?? {};
      assert.equal(type, "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret");
      const parsed = protoFromJson(envoyRoot(), "envoy.extensions.transport_sockets.tls.v3.Secret", secret);
      assert.ok(parsed.ok, parsed.ok ? "" : parsed.errors.join("\n"));
      const watched = stringAt(objectAt(source, "watched_directory"), "path") ?? "";
      assert.equal(secret["name"], stringAt(sds, "name"));
      const cert = objectAt(secret, "tls_certificate");
      assert.equal(stringAt(objectAt(cert, "certificate_chain"), "filename"), `${watched}/tls.crt`);
      assert.equal(stringAt(objectAt(cert, "private_key"), "filename"), `${watched}/tls.key`);
    }
  });
});
