import assert from "node:assert/strict";
import { test } from "node:test";
import { toProcessingResponse } from "./messages.ts";

const toEdge = { kind: "continue" as const, mutation: { setHeaders: { "x-gearbox-upstream": "edge" }, clearRouteCache: true, edgeEndpoint: "[fd00::7]:8088" } };

test("the edge agent goes to Envoy as dynamic metadata gearbox.edge/endpoint, never as a header", () => {
  const message = toProcessingResponse("request_body", toEdge);
  assert.deepEqual(message.dynamic_metadata, { fields: { "gearbox.edge": { structValue: { fields: { endpoint: { stringValue: "[fd00::7]:8088" } } } } } });
  const set = message.request_body?.response?.header_mutation?.set_headers ?? [];
  assert.deepEqual(
    set.map((h) => h.header?.key),
    ["x-gearbox-upstream"],
  );
  assert.equal(message.request_body?.response?.clear_route_cache, true);
  assert.ok(toProcessingResponse("request_headers", toEdge).dynamic_metadata, "also when decided on the headers");
});

test("no dynamic metadata without an edge agent, nor on the response path", () => {
  assert.equal(
    toProcessingResponse("request_body", { kind: "continue", mutation: { setHeaders: { "x-gearbox-upstream": "openai" } } }).dynamic_metadata,
    undefined,
  );
  assert.equal(toProcessingResponse("response_body", toEdge).dynamic_metadata, undefined);
});
