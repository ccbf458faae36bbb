/**
 * Every Envoy config under `envoy/` parses into Envoy's own Bootstrap proto (strict proto3
 * JSON mapping, see proto-json.ts) and gives Gearbox what it relies on (gearbox-checks.ts).
 * The negative tests prove both checkers can fail, with the error naming the field.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkGearboxBootstrap } from "./gearbox-checks.ts";
import { checkShadowBootstrap } from "./shadow-checks.ts";
import { BOOTSTRAP_TYPE, envoyConfigFiles, parseBootstrap, readEnvoyYaml } from "./load-config.ts";
import { arrayAtPath, isPlainObject, objectAtPath, type PlainObject } from "./plain.ts";
import { toPlainObject } from "./proto-json.ts";

const HCM = "static_resources.listeners[0].filter_chains[0].filters[0].typed_config";
const EXT_PROC = `${HCM}.http_filters[1].typed_config`;
const ROUTES = `${HCM}.route_config.virtual_hosts[0].routes`;

function plainBootstrap(json: unknown): PlainObject {
  const result = parseBootstrap(json);
  if (!result.ok) assert.fail(`expected a valid Bootstrap:\n${result.errors.join("\n")}`);
  return toPlainObject(result.type, result.message);
}

/** The sidecar config as YAML-parsed data, changed by `edit`, then parsed; returns the errors. */
function errorsAfter(edit: (config: unknown) => void): readonly string[] {
  const config = readEnvoyYaml("sidecar.yaml");
  edit(config);
  const result = parseBootstrap(config);
  assert.equal(result.ok, false, "the checker accepted a broken config");
  return result.ok ? [] : result.errors;
}

/** The sidecar config in plain proto form, changed by `edit`, then run through Gearbox's checks. */
function gearboxErrorsAfter(edit: (plain: PlainObject) => void): string[] {
  const plain = plainBootstrap(readEnvoyYaml("sidecar.yaml"));
  edit(plain);
  return checkGearboxBootstrap(plain);
}

function assertHasError(errors: readonly string[], expected: string | RegExp): void {
  const found = errors.some((e) => (typeof expected === "string" ? e === expected : expected.test(e)));
  assert.ok(found, `no error ${String(expected)} among:\n${errors.join("\n")}`);
}

void describe("Envoy configs under envoy/", () => {
  const files = envoyConfigFiles();

  void it("include the sidecar, egress gateway and local dev configs", () => {
    for (const name of ["sidecar.yaml", "egress-gateway.yaml", "local-dev.yaml"]) assert.ok(files.includes(name), name);
  });

  /** Shadow configs (`shadow-*.yaml`) keep Gearbox off the live path: they have their own checks. */
  const shadow = (name: string) => name.startsWith("shadow-");

  void it("include both shadow variants (observability mode, mirroring)", () => {
    for (const name of ["shadow-observability.yaml", "shadow-mirror.yaml"]) assert.ok(files.includes(name), name);
  });

  for (const name of files) {
    void it(`${name} parses strictly as ${BOOTSTRAP_TYPE} and round-trips`, () => {
      const result = parseBootstrap(readEnvoyYaml(name));
      assert.ok(result.ok, result.ok ? "" : `${name}:\n${result.errors.join("\n")}`);
      // protoFromJson already proved encode → decode → encode is byte-stable; show the decoded
      // message again survives a wire trip unchanged, Any payloads included.
      const again = result.type.decode(result.type.encode(result.message).finish());
      assert.deepEqual(toPlainObject(result.type, again), toPlainObject(result.type, result.message));
      assert.ok(arrayAtPath(toPlainObject(result.type, again), "static_resources.clusters").length >= (shadow(name) ? 4 : 5));
    });

    if (shadow(name)) {
      void it(`${name} shadows: live traffic never waits for Gearbox, copies never reach an upstream`, () => {
        assert.deepEqual(checkShadowBootstrap(plainBootstrap(readEnvoyYaml(name))), []);
      });
      continue;
    }
    void it(`${name} gives Gearbox the routing, ext_proc and clusters it relies on`, () => {
      assert.deepEqual(checkGearboxBootstrap(plainBootstrap(readEnvoyYaml(name))), []);
    });
  }

  void it("the shadow checks can fail: a blocking ext_proc on the live path, a mirror sink that forwards", () => {
    const observing = plainBootstrap(readEnvoyYaml("shadow-observability.yaml"));
    objectAtPath(observing, EXT_PROC)["observability_mode"] = false;
    assertHasError(checkShadowBootstrap(observing), /no listener serves live traffic without a blocking ext_proc/);
    const streamed = plainBootstrap(readEnvoyYaml("shadow-observability.yaml"));
    objectAtPath(objectAtPath(streamed, EXT_PROC), "processing_mode")["request_body_mode"] = "BUFFERED";
    assertHasError(checkShadowBootstrap(streamed), /observability mode supports STREAMED/);
    const mirror = plainBootstrap(readEnvoyYaml("shadow-mirror.yaml"));
    const sink = objectAtPath(mirror, "static_resources.listeners[1].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0]");
    delete sink["direct_response"];
    sink["route"] = { cluster: "openai" };
    assertHasError(checkShadowBootstrap(mirror), /must be answered locally/);
    const unmirrored = plainBootstrap(readEnvoyYaml("shadow-mirror.yaml"));
    delete objectAtPath(unmirrored, `${ROUTES}[2].route`)["request_mirror_policies"];
    assertHasError(checkShadowBootstrap(unmirrored), /mirrors to no Gearbox shadow listener/);
  });
});

void describe("strict proto checker rejects", () => {
  void it("an unknown field, naming it and the likely intended one", () => {
    const errors = errorsAfter((c) => {
      objectAtPath(c, "static_resources.clusters[0]")["conect_timeout"] = "1s";
    });
    assert.deepEqual(errors, [
      'static_resources.clusters[0].conect_timeout: unknown field "conect_timeout" in envoy.config.cluster.v3.Cluster (did you mean "connect_timeout"?)',
    ]);
  });

  void it("an unknown field inside an Any, checked against the Any's type", () => {
    const errors = errorsAfter((c) => {
      objectAtPath(c, `${EXT_PROC}.processing_mode`)["request_body"] = "BUFFERED";
    });
    assertHasError(errors, new RegExp(`^${EXT_PROC.replace(/[[\].]/g, "\\$&")}\\.processing_mode\\.request_body: unknown field`));
  });

  void it("a wrong scalar type", () => {
    const errors = errorsAfter((c) => {
      objectAtPath(c, "admin.address.socket_address")["port_value"] = "9901x";
      objectAtPath(c, "node")["id"] = 42;
      objectAtPath(c, `${EXT_PROC}`)["allow_mode_override"] = "true";
    });
    assert.deepEqual(errors, [
      "node.id: expected string, got number 42",
      'admin.address.socket_address.port_value: expected uint32 (an integer or a decimal string), got string "9901x"',
      `${EXT_PROC}.allow_mode_override: expected bool (true or false), got string "true"`,
    ]);
  });

  void it("a bad enum name, listing the good ones", () => {
    const errors = errorsAfter((c) => {
      objectAtPath(c, `${EXT_PROC}.processing_mode`)["request_body_mode"] = "BUFFER";
    });
    assert.deepEqual(errors, [
      `${EXT_PROC}.processing_mode.request_body_mode: unknown enum value "BUFFER" (expected one of NONE, STREAMED, BUFFERED, BUFFERED_PARTIAL)`,
    ]);
  });

  void it("a bad Duration, as text or as a bare number", () => {
    const errors = errorsAfter((c) => {
      objectAtPath(c, "static_resources.clusters[0]")["connect_timeout"] = "5 seconds";
      objectAtPath(c, EXT_PROC)["message_timeout"] = 2;
    });
    assertHasError(errors, /^static_resources\.clusters\[0\]\.connect_timeout: invalid Duration string "5 seconds"/);
    assertHasError(errors, /\.http_filters\[1\]\.typed_config\.message_timeout: invalid Duration number 2/);
  });

  void it("an Any whose @type is not a loaded message", () => {
    const errors = errorsAfter((c) => {
      objectAtPath(c, EXT_PROC)["@type"] = "type.googleapis.com/envoy.extensions.filters.http.nope.v3.Nope";
    });
    assert.deepEqual(errors, [
      `${EXT_PROC}.@type: unknown Any type URL "type.googleapis.com/envoy.extensions.filters.http.nope.v3.Nope": no message "envoy.extensions.filters.http.nope.v3.Nope" is loaded`,
    ]);
  });

  void it("two members of one oneof", () => {
    const errors = errorsAfter((c) => {
      objectAtPath(c, `${ROUTES}[0].route`)["cluster_header"] = "x-gearbox-upstream";
    });
    assert.deepEqual(errors, [`${ROUTES}[0].route: oneof cluster_specifier takes at most one of its fields, got cluster, cluster_header`]);
  });

  void it("a repeated field that is not an array, and a map that is not an object", () => {
    const errors = errorsAfter((c) => {
      objectAtPath(c, `${HCM}.route_config.virtual_hosts[0]`)["domains"] = "*";
      objectAtPath(c, "static_resources.clusters[0]")["typed_extension_protocol_options"] = [];
    });
    assertHasError(errors, `${HCM}.route_config.virtual_hosts[0].domains: expected an array (repeated string), got string "*"`);
    assertHasError(
      errors,
      /^static_resources\.clusters\[0\]\.typed_extension_protocol_options: expected an object \(map<string, google\.protobuf\.Any>\), got an array$/,
    );
  });

  void it("a missing required message and a value outside its validate.rules range", () => {
    const errors = errorsAfter((c) => {
      delete objectAtPath(c, EXT_PROC)["grpc_service"];
      objectAtPath(c, EXT_PROC)["max_message_timeout"] = "7200s";
      objectAtPath(c, "admin.address.socket_address")["port_value"] = 70000;
    });
    assertHasError(errors, `${EXT_PROC}.grpc_service: is required (validate.rules)`);
    assertHasError(errors, /\.max_message_timeout: 7200 must be <= 3600/);
    assertHasError(errors, "admin.address.socket_address.port_value: 70000 must be <= 65535 (validate.rules)");
  });
});

void describe("Gearbox consistency checks reject", () => {
  void it("a router filter that is not last", () => {
    const errors = gearboxErrorsAfter((p) => arrayAtPath(p, `${HCM}.http_filters`).reverse());
    assertHasError(errors, `${HCM}.http_filters: the router filter must be last, and only there`);
  });

  void it("an ext_proc cluster that does not exist, or is not HTTP/2", () => {
    assertHasError(
      gearboxErrorsAfter((p) => {
        objectAtPath(p, `${EXT_PROC}.grpc_service.envoy_grpc`)["cluster_name"] = "gearbox";
      }),
      /grpc_service: ext_proc must use envoy_grpc with an existing cluster, got "gearbox"/,
    );
    assertHasError(
      gearboxErrorsAfter((p) => {
        const options = objectAtPath(p, "static_resources.clusters[0].typed_extension_protocol_options");
        const http = options["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"];
        assert.ok(isPlainObject(http));
        http["explicit_http_config"] = { http_protocol_options: {} };
      }),
      /cluster gearbox_extproc must speak HTTP\/2/,
    );
  });

  void it("a processing mode Gearbox is not written for", () => {
    const errors = gearboxErrorsAfter((p) => {
      objectAtPath(p, `${EXT_PROC}.processing_mode`)["response_body_mode"] = "STREAMED";
      delete objectAtPath(p, EXT_PROC)["allow_mode_override"];
      objectAtPath(p, EXT_PROC)["failure_mode_allow"] = true;
    });
    assertHasError(errors, `${EXT_PROC}.processing_mode.response_body_mode: Gearbox needs BUFFERED, got STREAMED`);
    assertHasError(errors, `${EXT_PROC}.allow_mode_override: Gearbox needs true`);
    assertHasError(errors, `${EXT_PROC}.failure_mode_allow: Gearbox needs false`);
  });

  void it("ext_proc without the caller's attributes, or asking for one Envoy never sends", () => {
    const errors = gearboxErrorsAfter((p) => {
      objectAtPath(p, EXT_PROC)["request_attributes"] = ["source.address", "source.principal"];
    });
    assert.deepEqual(errors, [
      `${EXT_PROC}.request_attributes: Gearbox needs connection.uri_san_peer_certificate to know the caller`,
      `${EXT_PROC}.request_attributes: Envoy never sends source.principal; use connection.uri_san_peer_certificate`,
    ]);
  });

  void it("a route to a cluster that does not exist", () => {
    const errors = gearboxErrorsAfter((p) => {
      objectAtPath(p, "static_resources.clusters[2]")["name"] = "claude";
    });
    assertHasError(errors, `${ROUTES}[1].route: cluster anthropic does not exist`);
  });

  void it("an edge cluster that picks its host from x-gearbox-edge-endpoint (the previous config), not the metadata", () => {
    const errors = gearboxErrorsAfter((p) => {
      objectAtPath(p, "static_resources.clusters[4]")["original_dst_lb_config"] = { use_http_header: true, http_header_name: "x-gearbox-edge-endpoint" };
    });
    assertHasError(errors, /^clusters\[edge\]\.original_dst_lb_config\.metadata_key: must read gearbox\.edge\/endpoint/);
    assertHasError(errors, /^clusters\[edge\]\.original_dst_lb_config\.use_http_header: a header callers can send/);
  });

  void it("an edge route without the metadata guard (the previous config), or with one that lets unparsable values through", () => {
    const edgeRoute = (p: PlainObject): PlainObject => objectAtPath(p, `${ROUTES}[3].match`);
    const unguarded = gearboxErrorsAfter((p) => {
      delete edgeRoute(p)["dynamic_metadata"];
    });
    // Without metadata, ORIGINAL_DST would dial the connection's own destination.
    assertHasError(
      unguarded,
      /\/v1\/chat\/completions with headers \[\["x-gearbox-upstream","edge"\],\["x-gearbox-edge-endpoint","10\.0\.0\.1:22"\]\] must get a direct response/,
    );
    const lax = gearboxErrorsAfter((p) => {
      objectAtPath(arrayAtPath(edgeRoute(p), "dynamic_metadata")[0], "value.string_match.safe_regex")["regex"] = ".+";
    });
    assertHasError(lax, /metadata \[\["gearbox\.edge\/endpoint","api\.openai\.com:80"\]\] must get a direct response/);
    assertHasError(lax, /metadata \[\["gearbox\.edge\/endpoint","10\.0\.0\.7:65536"\]\] must get a direct response/);
    const v4only = gearboxErrorsAfter((p) => {
      objectAtPath(arrayAtPath(edgeRoute(p), "dynamic_metadata")[0], "value.string_match.safe_regex")["regex"] = "[0-9.]+:[0-9]+";
    });
    assertHasError(v4only, /the edge agent \[fd00::7\]:8088 named in dynamic metadata must reach cluster edge/);
  });

  void it("an ext_proc filter that does not accept the edge metadata namespace (the previous config)", () => {
    const errors = gearboxErrorsAfter((p) => {
      delete objectAtPath(p, EXT_PROC)["metadata_options"];
    });
    assertHasError(errors, /metadata_options\.receiving_namespaces\.untyped: must list gearbox\.edge/);
  });

  void it("no header strip ahead of ext_proc (the previous config), or one that keeps x-gearbox-edge-endpoint", () => {
    const none = gearboxErrorsAfter((p) => {
      arrayAtPath(p, `${HCM}.http_filters`).shift();
    });
    assertHasError(none, /http_filters\[0\]: must be a header_mutation removing x-gearbox-upstream, x-gearbox-edge-endpoint/);
    const partial = gearboxErrorsAfter((p) => {
      arrayAtPath(p, `${HCM}.http_filters[0].typed_config.mutations.request_mutations`).pop();
    });
    assertHasError(partial, /http_filters\[0\]: must be a header_mutation removing x-gearbox-edge-endpoint from/);
  });

  void it("a catch-all route shadowing the upstream routes, and LLM traffic with no upstream chosen reaching a cluster", () => {
    const errors = gearboxErrorsAfter((p) => {
      arrayAtPath(p, ROUTES).unshift({ match: { prefix: "/" }, route: { cluster: "openai" } });
    });
    assertHasError(errors, /x-gearbox-upstream: anthropic must reach cluster anthropic, reaches openai/);
    assertHasError(errors, /\/v1\/chat\/completions with headers \[\] must get a direct response/);
  });

  void it("a provider route that does not rewrite :authority to the TLS SNI", () => {
    const errors = gearboxErrorsAfter((p) => {
      delete objectAtPath(p, `${ROUTES}[2].route`)["host_rewrite_literal"];
    });
    assertHasError(errors, `${ROUTES}[2].route.host_rewrite_literal: must be generativelanguage.googleapis.com so :authority matches the TLS upstream`);
  });

  void it("provider retries that could repeat a billed call, ignore 429 and retry-after, or have no budget", () => {
    const errors = gearboxErrorsAfter((p) => {
      // What the configs had before: connect failures only, no 429, no retry-after, no budget.
      objectAtPath(p, `${ROUTES}[0].route`)["retry_policy"] = { retry_on: "connect-failure,refused-stream", num_retries: { value: 1 } };
      objectAtPath(p, `${ROUTES}[1].route.retry_policy`)["retry_on"] = "5xx,reset,retriable-status-codes";
      objectAtPath(p, `${ROUTES}[1].route.retry_policy`)["retriable_status_codes"] = [429, 400];
      objectAtPath(p, `${ROUTES}[1].route.retry_policy`)["num_retries"] = { value: 5 };
      delete objectAtPath(p, `${ROUTES}[2].route`)["retry_policy"];
      delete objectAtPath(p, "static_resources.clusters[1]")["circuit_breakers"];
      objectAtPath(p, "static_resources.clusters[2].circuit_breakers.thresholds[0].retry_budget.budget_percent")["value"] = 50;
    });
    assertHasError(errors, `${ROUTES}[0].route.retry_policy: must retry 429 (retry_on retriable-status-codes with 429 in retriable_status_codes)`);
    assertHasError(errors, `${ROUTES}[0].route.retry_policy.rate_limited_retry_back_off: must read retry-after (SECONDS)`);
    assertHasError(errors, `${ROUTES}[1].route.retry_policy.retry_on: '5xx' may retry a call the provider already started (and billed)`);
    assertHasError(errors, `${ROUTES}[1].route.retry_policy.retry_on: 'reset' may retry a call the provider already started (and billed)`);
    assertHasError(errors, `${ROUTES}[1].route.retry_policy.retry_on: must retry connect-failure`);
    assertHasError(errors, `${ROUTES}[1].route.retry_policy.retriable_status_codes: 400 is not a status a provider answers without billing`);
    assertHasError(errors, `${ROUTES}[1].route.retry_policy.num_retries: at most 2; Gearbox's fallback chain takes over after that`);
    assertHasError(errors, `${ROUTES}[2].route.retry_policy: a route to gemini needs one (connect failures, 429 and 5xx)`);
    assertHasError(errors, "clusters[openai].circuit_breakers: needs a retry_budget (at most 20 %)");
    assertHasError(errors, "clusters[anthropic].circuit_breakers.retry_budget.budget_percent: at most 20, is 50");
  });
});

void describe("the edge route", () => {
  void it("must not retry: a retry_policy on to_edge is reported", () => {
    const errors = gearboxErrorsAfter((plain) => {
      objectAtPath(plain, `${ROUTES}[3].route`)["retry_policy"] = { retry_on: "connect-failure", num_retries: { value: 1 } };
    });
    assertHasError(errors, /routes\[3\]\.route\.retry_policy: the edge route must not retry/);
  });
});
