/**
 * Conversions between Envoy's ext_proc messages and the processor's plain terms. This file,
 * `attributes.ts` and `server.ts` are the only ones that touch ext_proc types.
 */
import type { HeaderMap__Output } from "../../proto/generated/envoy/config/core/v3/HeaderMap.ts";
import type { HeaderValueOption } from "../../proto/generated/envoy/config/core/v3/HeaderValueOption.ts";
import type { ProcessingMode } from "../../proto/generated/envoy/extensions/filters/http/ext_proc/v3/ProcessingMode.ts";
import type { CommonResponse } from "../../proto/generated/envoy/service/ext_proc/v3/CommonResponse.ts";
import type { HeaderMutation } from "../../proto/generated/envoy/service/ext_proc/v3/HeaderMutation.ts";
import type { StatusCode } from "../../proto/generated/envoy/type/v3/StatusCode.ts";
import type { ProcessingResponse } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingResponse.ts";
import type { Struct } from "../../proto/generated/google/protobuf/Struct.ts";
import { EDGE_ENDPOINT_METADATA } from "../../xds/resources/envoy.ts";
import type { Headers, Mutation, Outcome } from "../processor/outcome.ts";

export type RequestPhase = "request_headers" | "request_body" | "response_headers" | "response_body" | "request_trailers" | "response_trailers";

/**
 * Envoy's HeaderMap → a plain map with lower-case keys. Values come in `raw_value` bytes when
 * Envoy's `send_header_raw_value` runtime guard is on (the default), else in `value`.
 */
export function headersFromEnvoy(map: HeaderMap__Output | null | undefined): Headers {
  const out: Headers = {};
  for (const h of map?.headers ?? []) {
    if (!h.key) continue;
    const key = h.key.toLowerCase();
    const value = h.raw_value && h.raw_value.length > 0 ? h.raw_value.toString("utf8") : (h.value ?? "");
    out[key] = out[key] === undefined ? value : `${out[key]}, ${value}`;
  }
  return out;
}

/** A plain map → header mutations (values as `raw_value` bytes, overwriting). */
export function headerMutation(set: Headers | undefined, remove: string[] | undefined): HeaderMutation | undefined {
  if (!set && !remove) return undefined;
  const setHeaders: HeaderValueOption[] = [];
  for (const [key, value] of Object.entries(set ?? {})) {
    setHeaders.push({ header: { key, raw_value: Buffer.from(value) }, append_action: "OVERWRITE_IF_EXISTS_OR_ADD" });
  }
  return { set_headers: setHeaders, remove_headers: remove ?? [] };
}

/**
 * The processing mode Gearbox asks for when a response turns out to be an event stream. Envoy
 * takes `mode_override` as a whole mode, so every field is spelt out.
 */
export const STREAMED_RESPONSE_MODE: ProcessingMode = {
  request_header_mode: "SEND",
  response_header_mode: "SEND",
  request_body_mode: "BUFFERED",
  response_body_mode: "STREAMED",
  request_trailer_mode: "SKIP",
  response_trailer_mode: "SKIP",
};

function commonResponse(mutation: Mutation | undefined): CommonResponse {
  const response: CommonResponse = { status: "CONTINUE" };
  if (!mutation) return response;
  const headers = headerMutation(mutation.setHeaders, mutation.removeHeaders);
  if (headers) response.header_mutation = headers;
  if (mutation.body) response.body_mutation = { body: mutation.body };
  if (mutation.clearRouteCache) response.clear_route_cache = true;
  return response;
}

/**
 * `ProcessingResponse.dynamic_metadata` naming the edge agent: one Struct per namespace, which
 * Envoy writes into the request's dynamic metadata before applying the response's mutations
 * (`Filter::setDynamicMetadata` in ext_proc.cc), so the recomputed route and the ORIGINAL_DST
 * cluster see it.
 */
function edgeMetadata(endpoint: string): Struct {
  const inner: Struct = { fields: { [EDGE_ENDPOINT_METADATA.key]: { stringValue: endpoint } } };
  return { fields: { [EDGE_ENDPOINT_METADATA.namespace]: { structValue: inner } } };
}

/** The one ProcessingResponse answering a message of `phase`. */
export function toProcessingResponse(phase: RequestPhase, outcome: Outcome): ProcessingResponse {
  if (outcome.kind === "respond") {
    const { status, headers, body } = outcome.response;
    return {
      immediate_response: {
        status: { code: status as StatusCode },
        headers: headerMutation(headers, undefined) ?? null,
        body,
        details: "gearbox_rejected",
      },
    };
  }
  switch (phase) {
    case "request_headers":
    case "response_headers": {
      const message: ProcessingResponse = { [phase]: { response: commonResponse(outcome.mutation) } };
      if (outcome.streamResponseBody) message.mode_override = STREAMED_RESPONSE_MODE;
      const endpoint = outcome.mutation?.edgeEndpoint;
      if (endpoint !== undefined && phase === "request_headers") message.dynamic_metadata = edgeMetadata(endpoint);
      return message;
    }
    case "request_body":
    case "response_body": {
      const message: ProcessingResponse = { [phase]: { response: commonResponse(outcome.mutation) } };
      const endpoint = outcome.mutation?.edgeEndpoint;
      if (endpoint !== undefined && phase === "request_body") message.dynamic_metadata = edgeMetadata(endpoint);
      return message;
    }
    case "request_trailers":
    case "response_trailers":
      return { [phase]: {} };
    default:
      return phase satisfies never;
  }
}
