/**
 * Builders and readers for ext_proc messages, shared by the Envoy stand-in and the test servers.
 */
import type { CommonResponse } from "../../proto/generated/envoy/service/ext_proc/v3/CommonResponse.ts";
import type { HeaderValueOption } from "../../proto/generated/envoy/config/core/v3/HeaderValueOption.ts";
import type { ProcessingRequest, ProcessingRequest__Output } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingRequest.ts";
import type { ProcessingResponse } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingResponse.ts";
import type { HeaderMap } from "./headers.ts";
import type { Direction, RequestKind } from "./stats.ts";

/**
 * A `request_headers` or `response_headers` message. Like Envoy's C++ protobuf (proto3), default
 * values (false, empty bytes) are left off the wire, so servers decode them as absent.
 */
export function headersRequest(direction: Direction, headers: HeaderMap, endOfStream: boolean): ProcessingRequest {
  const message = { headers: headers.toProto(), ...(endOfStream ? { end_of_stream: true } : {}) };
  return direction === "request" ? { request_headers: message } : { response_headers: message };
}

/** A `request_body` or `response_body` message (defaults left off the wire, as Envoy does). */
export function bodyRequest(direction: Direction, body: Buffer, endOfStream: boolean): ProcessingRequest {
  const message = { ...(body.length > 0 ? { body } : {}), ...(endOfStream ? { end_of_stream: true } : {}) };
  return direction === "request" ? { request_body: message } : { response_body: message };
}

/** The kind of a received message (its `request` oneof case). */
export function requestKind(message: ProcessingRequest__Output): RequestKind {
  const kind = message.request;
  if (kind === undefined) throw new Error("ProcessingRequest without a request case");
  return kind;
}

/**
 * The response that answers `message` with `common` (CONTINUE and no mutation when omitted).
 * Trailers get a TrailersResponse carrying `common.header_mutation`.
 */
export function matchingResponse(message: ProcessingRequest__Output, common: CommonResponse = {}): ProcessingResponse {
  const kind = requestKind(message);
  switch (kind) {
    case "request_headers":
      return { request_headers: { response: common } };
    case "response_headers":
      return { response_headers: { response: common } };
    case "request_body":
      return { request_body: { response: common } };
    case "response_body":
      return { response_body: { response: common } };
    case "request_trailers":
      return { request_trailers: { header_mutation: common.header_mutation ?? null } };
    case "response_trailers":
      return { response_trailers: { header_mutation: common.header_mutation ?? null } };
    default: {
      const unknown: never = kind;
      throw new Error(`unknown request kind ${String(unknown)}`);
    }
  }
}

/** A `set_headers` entry with the value in `raw_value` (what Envoy reads by default). */
export function setHeader(key: string, value: string, append = false): HeaderValueOption {
  return { header: { key, raw_value: Buffer.from(value, "latin1") }, append: { value: append } };
}

/** Header values of a received `HttpHeaders` message, by lower-case name (first value). */
export function headerValues(message: ProcessingRequest__Output): Record<string, string> {
  const http = message.request_headers ?? message.response_headers;
  const out: Record<string, string> = {};
  for (const h of http?.headers?.headers ?? []) {
    const key = h.key ?? "";
    out[key] ??= h.raw_value !== undefined && h.raw_value.length > 0 ? h.raw_value.toString("latin1") : (h.value ?? "");
  }
  return out;
}

/** Shared with the shipped ext_proc client (`cli/replay/extproc-client.ts`). */
export { httpStatusNumber } from "../../common/envoy/http-status.ts";
