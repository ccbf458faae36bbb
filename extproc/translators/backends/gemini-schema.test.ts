/** JSON Schema → Gemini `Schema`: each cleaning rule of `gemini-schema.ts`. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { hasRef, toGeminiParameters, toGeminiSchema } from "./gemini-schema.ts";

test("keys Gemini rejects are dropped, at every depth", () => {
  const schema = {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: "x",
    $comment: "c",
    title: "T",
    type: "object",
    additionalProperties: false,
    properties: {
      list: {
        type: "array",
        uniqueItems: true,
        items: {
          type: "object",
          additionalProperties: { type: "string" },
          properties: { a: { type: "number", exclusiveMinimum: 0, multipleOf: 2, minimum: 1 } },
        },
      },
    },
    patternProperties: { "^x": {} },
    examples: [{}],
    not: {},
    if: {},
    then: {},
    else: {},
  };
  assert.deepEqual(toGeminiSchema(schema), {
    title: "T",
    type: "object",
    properties: { list: { type: "array", items: { type: "object", properties: { a: { type: "number", minimum: 1 } } } } },
  });
});

test("nullable idioms: type arrays, anyOf/oneOf with null; several types become anyOf", () => {
  assert.deepEqual(toGeminiSchema({ type: ["integer", "null"] }), { type: "integer", nullable: true });
  assert.deepEqual(toGeminiSchema({ type: ["string", "number"] }), { anyOf: [{ type: "string" }, { type: "number" }] });
  assert.deepEqual(toGeminiSchema({ description: "d", anyOf: [{ type: "string", maxLength: 3 }, { type: "null" }] }), {
    description: "d",
    nullable: true,
    type: "string",
    maxLength: 3,
  });
  assert.deepEqual(toGeminiSchema({ oneOf: [{ type: "string" }, { type: "integer", additionalProperties: 1 }] }), {
    anyOf: [{ type: "string" }, { type: "integer" }],
  });
});

test("const and enums: string const → enum; non-string enums dropped; string enums imply type string", () => {
  assert.deepEqual(toGeminiSchema({ const: "on" }), { type: "string", enum: ["on"] });
  assert.deepEqual(toGeminiSchema({ type: "integer", enum: [1, 2] }), { type: "integer" });
  assert.deepEqual(toGeminiSchema({ enum: ["a", "b"] }), { enum: ["a", "b"], type: "string" });
});

test("formats: only those Gemini acts on survive", () => {
  assert.deepEqual(toGeminiSchema({ type: "string", format: "date-time" }), { type: "string", format: "date-time" });
  assert.deepEqual(toGeminiSchema({ type: "integer", format: "int64" }), { type: "integer", format: "int64" });
  assert.deepEqual(toGeminiSchema({ type: "string", format: "email" }), { type: "string" });
});

test("allOf with one member is inlined (outer keys win); empty properties dropped; required filtered to known properties", () => {
  assert.deepEqual(toGeminiSchema({ description: "outer", allOf: [{ type: "object", description: "inner", properties: { a: { type: "string" } } }] }), {
    description: "outer",
    type: "object",
    properties: { a: { type: "string" } },
  });
  assert.deepEqual(toGeminiSchema({ type: "object", properties: {}, required: ["a"] }), { type: "object" });
  assert.deepEqual(toGeminiSchema({ type: "object", properties: { a: { type: "string" } }, required: ["a", "b", 3] }), {
    type: "object",
    properties: { a: { type: "string" } },
    required: ["a"],
  });
  assert.deepEqual(toGeminiSchema({ type: "array", items: [{ type: "string" }] }), { type: "array" }, "tuple items have no Gemini form");
});

test("parameters: none for a parameterless function; $ref anywhere → parametersJsonSchema without $schema", () => {
  assert.deepEqual(toGeminiParameters(undefined), {});
  assert.deepEqual(toGeminiParameters({ type: "object", properties: {}, additionalProperties: false }), {});
  assert.deepEqual(toGeminiParameters({ type: "object", properties: { a: { type: "string" } } }), {
    parameters: { type: "object", properties: { a: { type: "string" } } },
  });
  const withRef = {
    $schema: "s",
    type: "object",
    properties: { list: { type: "array", items: { $ref: "#/$defs/Item" } } },
    $defs: { Item: { type: "string" } },
  };
  assert.equal(hasRef(withRef), true);
  assert.deepEqual(toGeminiParameters(withRef), {
    parametersJsonSchema: { type: "object", properties: { list: { type: "array", items: { $ref: "#/$defs/Item" } } }, $defs: { Item: { type: "string" } } },
  });
});

test("not a schema → {}; depth is bounded", () => {
  assert.deepEqual(toGeminiSchema(true), {});
  let deep: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < 200; i += 1) deep = { type: "object", properties: { x: deep } };
  assert.doesNotThrow(() => toGeminiSchema(deep));
});
