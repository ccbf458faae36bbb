/**
 * Who is calling, from the attributes Envoy's ext_proc filter sends (and, where trusted, the
 * `x-forwarded-client-cert` metadata of the gRPC call). With `request_attributes`
 * configured (`envoy/*.yaml`), the first request message carries
 * `attributes["envoy.filters.http.ext_proc"]`, a Struct keyed by attribute name
 * (`ProcessingRequest.attributes`, envoy/service/ext_proc/v3/external_processor.proto).
 */
import type * as grpc from "@grpc/grpc-js";
import type { ProcessingRequest__Output } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingRequest.ts";
import type { Struct__Output } from "../../proto/generated/google/protobuf/Struct.ts";
import { canonicalIp } from "../client-ip.ts";
import { principalFromXfcc } from "../governance/xfcc.ts";
import type { ClientIdentity } from "../processor/processor.ts";

/** Key of `ProcessingRequest.attributes`: the name of Envoy's ext_proc filter. */
export const EXT_PROC_ATTRIBUTES_KEY = "envoy.filters.http.ext_proc";
/** The downstream peer as `ip:port` (`[ip]:port` for IPv6). */
export const SOURCE_ADDRESS = "source.address";
/** First URI SAN of the client certificate: the SPIFFE ID under mTLS, absent without a certificate. */
export const PEER_URI_SAN = "connection.uri_san_peer_certificate";

/**
 * The IP of an Envoy socket address string (`Address::Instance::asString()`): `1.2.3.4:80` →
 * `1.2.3.4`, `[2001:db8::1]:80` → `2001:db8::1`. Undefined for what is not an IP address (a
 * pipe path, an internal listener) or is malformed.
 */
export function ipOfEnvoyAddress(value: string): string | undefined {
  const v6 = /^\[([^\]]+)\]:\d+$/.exec(value);
  if (v6) return canonicalIp(v6[1]);
  const v4 = /^([^:]+):\d+$/.exec(value);
  return v4 ? canonicalIp(v4[1]) : undefined;
}

function stringField(attributes: Struct__Output | undefined, name: string): string | undefined {
  const text = attributes?.fields?.[name]?.stringValue;
  return text === undefined || text === "" ? undefined : text;
}

/** The gRPC metadata key Istio's inbound sidecar writes the calling sidecar's certificate into. */
export const XFCC_METADATA = "x-forwarded-client-cert";

/**
 * The workload identity in a `Process` call's `x-forwarded-client-cert` metadata (the whole
 * stream's, read once): several values are one header, as HTTP joins them. Undefined unless
 * `trusted` (`extproc.trust_xfcc`).
 */
export function forwardedPrincipalOf(metadata: grpc.Metadata, trusted: boolean): string | undefined {
  if (!trusted) return undefined;
  const values = metadata.get(XFCC_METADATA).map((v) => (typeof v === "string" ? v : v.toString("latin1")));
  return values.length === 0 ? undefined : principalFromXfcc(values.join(","));
}

/**
 * The caller of a request, from one ProcessingRequest's attributes: its IP (port dropped) and its
 * workload identity — the peer certificate's URI SAN Envoy reports, else `forwardedPrincipal`
 * (the XFCC one of `forwardedPrincipalOf`). Without attributes (they come only with the first
 * request message, and only when Envoy is configured to send them) only `forwardedPrincipal`.
 */
export function clientIdentityOf(message: ProcessingRequest__Output, forwardedPrincipal?: string): ClientIdentity {
  const attributes = message.attributes?.[EXT_PROC_ATTRIBUTES_KEY];
  const source = stringField(attributes, SOURCE_ADDRESS);
  const address = source === undefined ? undefined : ipOfEnvoyAddress(source);
  const principal = stringField(attributes, PEER_URI_SAN) ?? forwardedPrincipal;
  return { ...(address === undefined ? {} : { address }), ...(principal === undefined ? {} : { principal }) };
}
