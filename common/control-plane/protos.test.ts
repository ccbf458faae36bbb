import assert from "node:assert/strict";
import { test } from "node:test";
import { adsService, edgeRegistryService, jsonToStruct, packAny, structToJson, TYPE_URLS, unpackAny } from "./protos.ts";

test("the ADS and edge-registry services load with their bidirectional streams", () => {
  const ads = adsService().service;
  assert.equal(ads.StreamAggregatedResources?.requestStream, true);
  assert.equal(ads.DeltaAggregatedResources?.responseStream, true);
  const registry = edgeRegistryService().service;
  assert.equal(registry.Connect?.path, "/gearbox.v1.EdgeRegistryService/Connect");
});

test("a cluster with a nested typed config round-trips through Any", () => {
  const any = packAny(TYPE_URLS.cluster, {
    name: "openai",
    type: "LOGICAL_DNS",
    transport_socket: {
      name: "envoy.transport_sockets.tls",
      typed_config: { "@type": "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext", sni: "api.openai.com" },
    },
  });
  const back = unpackAny(any);
  assert.equal(back.name, "openai");
  assert.equal(back.type, "LOGICAL_DNS");
  const typed = (back.transport_socket as { typed_config: { type_url: string } }).typed_config;
  assert.equal(typed.type_url, "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext");
});

test("Gearbox's routing policy carries the route section as a Struct, JSON in and out", () => {
  const route = {
    default_target: "edge",
    heuristic: { complexity_threshold: 0.65, sticky: false },
    rules: [{ when: { intent: ["math"] }, target: "cloud" }],
    none: null,
  };
  const any = packAny(TYPE_URLS.routingPolicy, { name: "default", route: jsonToStruct(route) });
  const back = unpackAny(any);
  assert.equal(back.name, "default");
  assert.deepEqual(structToJson(back.route), route);
});

test("an unknown type URL is refused", () => {
  assert.throws(() => packAny("type.googleapis.com/no.Such", {}), /no such type|no\.Such/i);
});
