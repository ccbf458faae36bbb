/** Function-call assembly: whole calls, Vertex's streamed partial arguments, and malformed sequences. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { GatewayError } from "../../../common/errors.ts";
import type { JsonObject } from "../../../common/schemas/fields.ts";
import { FunctionCallAssembler, parsePath, type CompletedCall } from "./gemini-function-calls.ts";

function feed(parts: JsonObject[]): CompletedCall[] {
  const assembler = new FunctionCallAssembler();
  return [...parts.flatMap((p) => assembler.push(p)), ...assembler.finish()];
}

test("whole calls complete at once; Gemini's own id is kept; missing args are {}", () => {
  assert.deepEqual(
    feed([
      { name: "a", args: { x: 1 } },
      { name: "b", id: "fc-1" },
    ]),
    [
      { name: "a", args: { x: 1 } },
      { name: "b", args: {}, id: "fc-1" },
    ],
  );
});

test("streamed arguments: strings continue while willContinue, numbers/booleans/nulls set, nested paths build objects and arrays", () => {
  const calls = feed([
    { name: "f", willContinue: true },
    { partialArgs: [{ jsonPath: "$.a.b[1]", stringValue: "he", willContinue: true }], willContinue: true },
    { partialArgs: [{ jsonPath: "$.a.b[1]", stringValue: "llo", willContinue: true }], willContinue: true },
    { partialArgs: [{ jsonPath: "$.a.b[1]", stringValue: "" }], willContinue: true },
    { partialArgs: [{ jsonPath: "$.a.b[1]", stringValue: "!" }], willContinue: true },
    { willContinue: true },
    {
      partialArgs: [
        { jsonPath: "$['odd key']", numberValue: 2.5 },
        { jsonPath: "$.ok", boolValue: false },
        { jsonPath: "$.none", nullValue: "NULL_VALUE" },
      ],
      willContinue: true,
    },
    {},
    { name: "g", willContinue: true },
  ]);
  assert.deepEqual(
    calls,
    [
      { name: "f", args: { a: { b: [null, "!"] }, "odd key": 2.5, ok: false, none: null } },
      { name: "g", args: {} },
    ],
    "a new string for a path whose previous one ended replaces it; an open call is closed by the next or by finish()",
  );
});

test("a part without willContinue that carries the last partial argument closes the call", () => {
  assert.deepEqual(feed([{ name: "w", willContinue: true }, { partialArgs: [{ jsonPath: "$.items[0].price", numberValue: 0.3 }] }, { name: "x", args: {} }]), [
    { name: "w", args: { items: [{ price: 0.3 }] } },
    { name: "x", args: {} },
  ]);
});

test("JSON paths: dotted, indexed and quoted segments", () => {
  assert.deepEqual(parsePath('$.a[0][\'b c\']["d\\"e"].f_1'), ["a", 0, "b c", 'd"e', "f_1"]);
  for (const bad of ["a.b", "$", "$.", "$[x]", "$..a"]) assert.throws(() => parsePath(bad), GatewayError, bad);
});

test("malformed sequences are 502s", () => {
  const malformed = (parts: JsonObject[]) =>
    assert.throws(
      () => feed(parts),
      (err: unknown) => err instanceof GatewayError && err.status === 502 && err.code === "malformed_function_call",
    );
  malformed([{ partialArgs: [{ jsonPath: "$.a", stringValue: "x" }], willContinue: true }]);
  malformed([{}]);
  malformed([{ name: "f", willContinue: true }, { partialArgs: [{ jsonPath: "$.a" }] }]);
  malformed([{ name: "f", willContinue: true }, { partialArgs: [{ stringValue: "x" }] }]);
  malformed([
    { name: "f", willContinue: true },
    {
      partialArgs: [
        { jsonPath: "$.a[0]", numberValue: 1 },
        { jsonPath: "$.a.b", numberValue: 2 },
      ],
    },
  ]);
});
