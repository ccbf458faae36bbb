/**
 * The proto3 JSON mapping rules of proto-json.ts, one by one, on small Envoy types.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ENVOY_CONFIG_PROTO_FILES, envoyRoot, loadEnvoyRoot } from "./envoy-root.ts";
import { valueAtPath } from "./plain.ts";
import { protoFromJson, toPlainObject, type ProtoJsonOptions } from "./proto-json.ts";

function accept(typeName: string, json: unknown, options?: ProtoJsonOptions, root = envoyRoot()): Record<string, unknown> {
  const result = protoFromJson(root, typeName, json, options);
  if (!result.ok) assert.fail(`expected ${typeName} to accept ${JSON.stringify(json)}:\n${result.errors.join("\n")}`);
  return toPlainObject(result.type, result.message);
}

function reject(typeName: string, json: unknown, options?: ProtoJsonOptions): readonly string[] {
  const result = protoFromJson(envoyRoot(), typeName, json, options);
  assert.equal(result.ok, false, `expected ${typeName} to reject ${JSON.stringify(json)}`);
  return result.ok ? [] : result.errors;
}

const RETRY = "envoy.config.route.v3.RetryPolicy";
const CLUSTER = "envoy.config.cluster.v3.Cluster";

void describe("proto JSON mapping", () => {
  void it("takes snake_case or lowerCamelCase names, but not both for one field", () => {
    assert.deepEqual(accept(RETRY, { retryOn: "5xx", per_try_timeout: "1s" }), {
      retry_on: "5xx",
      per_try_timeout: { seconds: "1" },
    });
    assert.deepEqual(reject(RETRY, { retry_on: "5xx", retryOn: "reset" }), ['retryOn: field retry_on given twice (as "retry_on" and "retryOn")']);
  });

  void it("takes 64-bit integers as numbers or strings, and refuses imprecise or out-of-range ones", () => {
    assert.equal(accept(RETRY, { host_selection_retry_max_attempts: "9007199254740993" })["host_selection_retry_max_attempts"], "9007199254740993");
    assert.equal(accept(RETRY, { host_selection_retry_max_attempts: 3 })["host_selection_retry_max_attempts"], "3");
    assert.match(reject(RETRY, { host_selection_retry_max_attempts: 2 ** 60 })[0] ?? "", /beyond 2\^53.*quote it as a string/);
    assert.match(reject(RETRY, { host_selection_retry_max_attempts: "9223372036854775808" })[0] ?? "", /out of range for int64/);
    assert.match(reject(RETRY, { host_selection_retry_max_attempts: 1.5 })[0] ?? "", /expected int64/);
  });

  void it("takes wrappers as bare scalars only, applying the field's validate rules to the value", () => {
    assert.deepEqual(accept(RETRY, { num_retries: 2 })["num_retries"], { value: 2 });
    assert.deepEqual(reject(RETRY, { num_retries: { value: 2 } }), ["num_retries: expected uint32 (an integer or a decimal string), got an object"]);
    assert.deepEqual(reject(RETRY, { num_retries: -1 }), ["num_retries: -1 is out of range for uint32 [0, 4294967295]"]);
  });

  void it("takes Struct as free JSON and rejects what JSON cannot hold", () => {
    const metadata = { filter_metadata: { gearbox: { tier: "edge", weights: [1, 2.5, null, true], nested: { a: {} } } } };
    const plain = accept("envoy.config.core.v3.Metadata", metadata);
    const fields = "filter_metadata.gearbox.fields";
    assert.deepEqual(valueAtPath(plain, `${fields}.tier`), { stringValue: "edge" });
    assert.deepEqual(valueAtPath(plain, `${fields}.weights.listValue.values`), [
      { numberValue: 1 },
      { numberValue: 2.5 },
      { nullValue: "NULL_VALUE" },
      { boolValue: true },
    ]);
    assert.deepEqual(valueAtPath(plain, `${fields}.nested.structValue.fields.a`), { structValue: {} });
    assert.deepEqual(reject("envoy.config.core.v3.Metadata", { filter_metadata: { gearbox: { x: Number.NaN } } }), [
      'filter_metadata["gearbox"].x: a Value number must be finite, got NaN',
    ]);
    assert.match(reject("envoy.config.core.v3.Metadata", { filter_metadata: { gearbox: [] } })[0] ?? "", /expected Struct \(a JSON object\)/);
  });

  void it("parses Duration, Timestamp and FieldMask from their JSON strings", () => {
    assert.deepEqual(accept("google.protobuf.Duration", "-1.5s"), { seconds: "-1", nanos: -500000000 });
    assert.deepEqual(accept("google.protobuf.Duration", "0.000000001s"), { nanos: 1 });
    assert.deepEqual(accept("google.protobuf.Timestamp", "1970-01-01T01:00:00.5+01:00"), { nanos: 500000000 });
    const withFieldMask = loadEnvoyRoot([...ENVOY_CONFIG_PROTO_FILES, "google/protobuf/field_mask.proto"]);
    assert.deepEqual(accept("google.protobuf.FieldMask", "retryOn,perTryTimeout.seconds", {}, withFieldMask), {
      paths: ["retry_on", "per_try_timeout.seconds"],
    });
    for (const bad of ["1.5", "1.5 s", "1m", "1.1234567891s", "s"]) {
      assert.match(reject("google.protobuf.Duration", bad)[0] ?? "", /invalid Duration/, bad);
    }
    assert.match(reject("google.protobuf.Timestamp", "2023-02-30T00:00:00Z")[0] ?? "", /no such date/);
  });

  void it("takes bytes as standard or URL-safe base64 only", () => {
    assert.equal(accept("envoy.config.core.v3.DataSource", { inline_bytes: "aGk/Pz8=" })["inline_bytes"], "aGk/Pz8=");
    assert.equal(accept("envoy.config.core.v3.DataSource", { inline_bytes: "aGk_Pz8" })["inline_bytes"], "aGk/Pz8=");
    assert.match(reject("envoy.config.core.v3.DataSource", { inline_bytes: "not base64!" })[0] ?? "", /expected bytes/);
  });

  void it("takes enums by name or number, refusing numbers a defined_only enum lacks", () => {
    const mode = "envoy.extensions.filters.http.ext_proc.v3.ProcessingMode";
    assert.equal(accept(mode, { request_body_mode: 2 })["request_body_mode"], "BUFFERED");
    assert.deepEqual(reject(mode, { request_body_mode: 9 }), ["request_body_mode: enum number 9 is not defined (validate.rules defined_only)"]);
    assert.match(reject(mode, { request_body_mode: true })[0] ?? "", /expected an enum name of .*BodySendMode/);
  });

  void it("treats null as unset, except for google.protobuf.Value", () => {
    assert.deepEqual(accept(RETRY, { retry_on: null, num_retries: null }), {});
    assert.deepEqual(accept("google.protobuf.Value", null), { nullValue: "NULL_VALUE" });
    assert.match(reject(RETRY, { retriable_status_codes: [500, null] })[0] ?? "", /^retriable_status_codes\[1\]: repeated elements cannot be null/);
  });

  void it("rejects deprecated fields and enum values unless asked not to", () => {
    assert.deepEqual(reject(CLUSTER, { name: "c", http2_protocol_options: {} }), [
      "http2_protocol_options: field http2_protocol_options of envoy.config.cluster.v3.Cluster is deprecated",
    ]);
    accept(CLUSTER, { name: "c", http2_protocol_options: {} }, { allowDeprecated: true });
    assert.deepEqual(reject("envoy.config.core.v3.ConfigSource", { ads: {}, resource_api_version: "V2" }), [
      "resource_api_version: enum value V2 of envoy.config.core.v3.ApiVersion is deprecated",
    ]);
  });

  void it("checks an Any's fields against its @type, wrapping well-known types in value", () => {
    const route = (config: unknown): unknown => ({ match: { prefix: "/" }, direct_response: { status: 200 }, typed_per_filter_config: { f: config } });
    const struct = "type.googleapis.com/google.protobuf.Struct";
    const plain = accept("envoy.config.route.v3.Route", route({ "@type": struct, value: { a: [1] } }));
    // toPlainObject shows the message in protobufjs form: Struct as fields/listValue/numberValue.
    assert.deepEqual(plain["typed_per_filter_config"], {
      f: { "@type": struct, fields: { a: { listValue: { values: [{ numberValue: 1 }] } } } },
    });
    assert.deepEqual(reject("envoy.config.route.v3.Route", route({ "@type": struct, a: 1 })), [
      'typed_per_filter_config["f"].a: unknown field: an Any holding google.protobuf.Struct has only "@type" and "value"',
    ]);
    assert.deepEqual(reject("envoy.config.route.v3.Route", route({ disabled: true })), [
      'typed_per_filter_config["f"].@type: an Any needs "@type": "type.googleapis.com/<full message name>", got nothing',
    ]);
  });

  void it("applies validate rules to fields left out, and to required oneofs", () => {
    const errors = reject("envoy.config.route.v3.Route", { match: { prefix: "/" }, direct_response: {} });
    assert.deepEqual(errors, ["direct_response.status: 0 must be >= 200 (validate.rules)"]);
    assert.deepEqual(reject("envoy.extensions.filters.http.ext_proc.v3.ExtProcPerRoute", {}), [
      "(root): oneof override requires one of disabled, overrides (validate.required)",
    ]);
    assert.deepEqual(reject("envoy.extensions.filters.http.ext_proc.v3.ExtProcPerRoute", { disabled: false }), [
      "disabled: false must be true (validate.rules)",
    ]);
  });

  void it("round-trips through encode and decode", () => {
    const result = protoFromJson(envoyRoot(), RETRY, { retry_on: "5xx", num_retries: 3, per_try_timeout: "2.5s" });
    assert.ok(result.ok);
    const again = result.type.decode(result.type.encode(result.message).finish());
    assert.deepEqual(toPlainObject(result.type, again), { retry_on: "5xx", num_retries: { value: 3 }, per_try_timeout: { seconds: "2", nanos: 500000000 } });
  });

  void it("reports an unknown top-level type instead of throwing", () => {
    assert.deepEqual(reject("envoy.nope.v3.Nope", {}), ["(root): no message type envoy.nope.v3.Nope is loaded"]);
  });
});
