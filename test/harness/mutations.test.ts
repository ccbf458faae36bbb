/**
 * Header mutation rules and application, checked against Envoy's mutation_rules.cc and
 * mutation_utils.cc behaviour.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { HeaderMutation } from "../../proto/generated/envoy/service/ext_proc/v3/HeaderMutation.ts";
import type { HeaderMutation__Output } from "../../proto/generated/envoy/service/ext_proc/v3/HeaderMutation.ts";
import type { HeaderMutationRules } from "./config.ts";
import { HeaderMap } from "./headers.ts";
import { setHeader } from "./messages.ts";
import { applyBodyMutation, applyHeaderMutation, MutationChecker, type ApplyOptions } from "./mutations.ts";

const options: ApplyOptions = { direction: "request", replacingMessage: false, removeContentLength: false };

/** The input message as the decoder would hand it over (same shape for these fields). */
function decoded(mutation: HeaderMutation): HeaderMutation__Output {
  return mutation as HeaderMutation__Output;
}

function request(): HeaderMap {
  return HeaderMap.of([
    [":authority", "api.openai.com"],
    [":path", "/v1/chat/completions"],
    [":method", "POST"],
    [":scheme", "https"],
    ["content-length", "10"],
    ["x-a", "1"],
  ]);
}

void test("the checker copies Envoy's rule order", () => {
  const cases: Array<[HeaderMutationRules, "set" | "append" | "remove", string, string, string]> = [
    [{}, "set", "x-app", "v", "ok"],
    [{}, "set", ":authority", "h", "routing-header"],
    [{}, "set", "host", "h", "routing-header"],
    [{}, "set", ":method", "GET", "routing-header"],
    [{}, "set", ":scheme", "http", "routing-header"],
    [{}, "set", ":path", "/x", "ok"],
    [{}, "append", ":path", "/x", "system-header"],
    [{}, "set", "x-envoy-retry-on", "5xx", "envoy-header"],
    [{}, "remove", ":path", "", "not-removable"],
    [{ allow_all_routing: true }, "remove", "host", "", "not-removable"],
    [{ allow_all_routing: true }, "set", ":authority", "a.example", "ok"],
    [{ allow_all_routing: true }, "set", ":authority", "bad host", "invalid-value"],
    [{ allow_all_routing: true }, "set", ":scheme", "ftp", "invalid-value"],
    [{}, "set", ":status", "100", "invalid-value"],
    [{}, "set", ":status", "201", "ok"],
    [{ allow_envoy: true }, "set", "x-envoy-retry-on", "5xx", "ok"],
    [{ disallow_system: true }, "set", ":path", "/x", "system-header"],
    [{ disallow_all: true }, "set", "x-app", "v", "disallow-all"],
    [{ disallow_all: true, allow_expression: "x-app" }, "set", "x-app", "v", "ok"],
    [{ allow_expression: "x-.*", disallow_expression: "x-secret" }, "set", "x-secret", "v", "disallow-expression"],
    [{ allow_expression: "x-.*" }, "set", "x-envoy-foo", "v", "ok"],
  ];
  for (const [rules, op, name, value, expected] of cases) {
    const result = new MutationChecker(rules).check(op, name, value);
    const got = result.result === "ok" ? "ok" : result.reason;
    assert.equal(got, expected, `${JSON.stringify(rules)} ${op} ${name}=${value}`);
  }
  assert.equal(new MutationChecker({ disallow_is_error: true }).check("set", "host", "h").result, "fail");
});

void test("set overwrites by default, append adds, append_action variants behave as named", () => {
  const headers = request();
  const out = applyHeaderMutation(
    headers,
    decoded({
      set_headers: [
        setHeader("x-a", "2"),
        setHeader("x-b", "1", true),
        setHeader("x-b", "2", true),
        { header: { key: "x-a", raw_value: Buffer.from("3") }, append_action: "ADD_IF_ABSENT" },
        { header: { key: "x-c", raw_value: Buffer.from("1") }, append_action: "OVERWRITE_IF_EXISTS" },
        { header: { key: "x-d", raw_value: Buffer.from("1") }, append_action: "OVERWRITE_IF_EXISTS_OR_ADD" },
      ],
    }),
    new MutationChecker({}),
    options,
  );
  assert.ok(out.ok);
  assert.deepEqual(headers.getAll("x-a"), ["2"]);
  assert.deepEqual(headers.getAll("x-b"), ["1", "2"]);
  assert.equal(headers.get("x-c"), undefined);
  assert.equal(headers.get("x-d"), "1");
});

void test("values come from raw_value, else value (counted); both set is an error", () => {
  const headers = request();
  const ok = applyHeaderMutation(
    headers,
    decoded({ set_headers: [{ header: { key: "x-plain", value: "v" } }, setHeader("x-raw", "r")] }),
    new MutationChecker({}),
    options,
  );
  assert.ok(ok.ok);
  assert.equal(ok.valueFieldUsed, 1);
  assert.equal(headers.get("x-plain"), "v");
  assert.equal(headers.get("x-raw"), "r");
  const both = applyHeaderMutation(
    headers,
    decoded({ set_headers: [{ header: { key: "x-both", value: "v", raw_value: Buffer.from("r") } }] }),
    new MutationChecker({}),
    options,
  );
  assert.equal(both.ok, false);
});

void test("invalid names or values fail the whole mutation", () => {
  const checker = new MutationChecker({});
  assert.equal(applyHeaderMutation(request(), decoded({ set_headers: [setHeader("bad name", "v")] }), checker, options).ok, false);
  assert.equal(applyHeaderMutation(request(), decoded({ set_headers: [setHeader("x-a", "a\r\nb")] }), checker, options).ok, false);
  assert.equal(applyHeaderMutation(request(), decoded({ remove_headers: ["bad name"] }), checker, options).ok, false);
});

void test("content-length sets are skipped when Envoy removes content-length for the body mode", () => {
  const headers = request();
  const out = applyHeaderMutation(headers, decoded({ set_headers: [setHeader("content-length", "99")] }), new MutationChecker({}), {
    ...options,
    removeContentLength: true,
  });
  assert.ok(out.ok);
  assert.equal(headers.get("content-length"), "10");
  assert.deepEqual(out.ignored, [{ direction: "request", header: "content-length", operation: "set", reason: "content-length-removed" }]);
});

void test("CONTINUE_AND_REPLACE may change :method whatever the rules", () => {
  const headers = request();
  const out = applyHeaderMutation(headers, decoded({ set_headers: [setHeader(":method", "PUT")] }), new MutationChecker({}), {
    ...options,
    replacingMessage: true,
  });
  assert.ok(out.ok);
  assert.equal(headers.get(":method"), "PUT");
});

void test("body mutations replace, clear, or leave the data", () => {
  const data = Buffer.from("data");
  assert.equal(applyBodyMutation(data, { body: Buffer.from("new"), mutation: "body" }).toString(), "new");
  assert.equal(applyBodyMutation(data, { clear_body: true, mutation: "clear_body" }).length, 0);
  assert.equal(applyBodyMutation(data, {}).toString(), "data");
});
