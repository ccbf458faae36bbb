/**
 * The ext_proc filter's `request_attributes`: Envoy evaluates each listed attribute (a CEL
 * expression over its attribute vocabulary) and sends the results in
 * `ProcessingRequest.attributes`, a map keyed by the filter's name whose value is a
 * `google.protobuf.Struct` keyed by attribute name.
 *
 * Copies `ExpressionManager::evaluateAttributes` (source/extensions/filters/http/ext_proc/
 * matching_utils.cc) and the attribute lookups of `source/extensions/filters/common/expr/
 * context.cc` (envoyproxy/envoy): strings become `string_value`, integers `number_value`, and an
 * attribute that evaluates to nothing (an error, e.g. a key Envoy does not know) is left out of
 * the Struct without failing anything.
 */
import { isIPv6 } from "node:net";
import type { Struct } from "../../proto/generated/google/protobuf/Struct.ts";
import type { Value } from "../../proto/generated/google/protobuf/Value.ts";

/** Key of `ProcessingRequest.attributes` (`FilterName` in ext_proc.cc). */
export const EXT_PROC_FILTER_NAME = "envoy.filters.http.ext_proc";

/** What the modelled attributes read from the downstream connection. */
export interface DownstreamConnection {
  /** Remote IP, as the socket reports it. */
  remoteAddress: string;
  remotePort: number;
  /** First URI SAN of the client certificate; undefined without one (no mTLS). */
  peerUriSan: string | undefined;
}

/**
 * `connection.uri_san_peer_certificate`: "The first URI entry in the SAN field of the peer
 * certificate in the downstream TLS connection" — absent without a peer certificate
 * (`extractSslInfo`). Under Istio mTLS it is the caller's SPIFFE ID.
 */
export const PEER_URI_SAN = "connection.uri_san_peer_certificate";

/**
 * Envoy's `source` map (`PeerWrapper`) knows `address` and `port` and nothing else: any other
 * `source.*` key (`source.principal`, say) evaluates to an error and is never sent.
 */
const SOURCE_PREFIX = "source.";

/**
 * Throws for a name the harness cannot evaluate as Envoy would. Modelled: every `source.*` key and
 * `connection.uri_san_peer_certificate`; other attributes (and CEL beyond a plain attribute path)
 * would need more of Envoy than the harness has.
 */
export function checkRequestAttributes(names: readonly string[]): void {
  for (const name of names) {
    if (!name.startsWith(SOURCE_PREFIX) && name !== PEER_URI_SAN) {
      throw new Error(`startEnvoy: request attribute "${name}" is not modelled by the harness`);
    }
  }
}

/**
 * `Address::Instance::asString()` of an IP address: `ip:port`, brackets around IPv6
 * (`[::1]:8080`), which is what `source.address` evaluates to.
 */
export function envoyAddressString(ip: string, port: number): string {
  return isIPv6(ip) ? `[${ip}]:${port}` : `${ip}:${port}`;
}

function evaluate(name: string, connection: DownstreamConnection): Value | undefined {
  switch (name) {
    case "source.address":
      return { stringValue: envoyAddressString(connection.remoteAddress, connection.remotePort) };
    case "source.port":
      return { numberValue: connection.remotePort };
    case PEER_URI_SAN:
      return connection.peerUriSan === undefined ? undefined : { stringValue: connection.peerUriSan };
    default:
      return undefined;
  }
}

/** The Struct Envoy sends for `names` on `connection` (possibly empty, never omitted). */
export function evaluateAttributes(names: readonly string[], connection: DownstreamConnection): Struct {
  const fields: Record<string, Value> = {};
  for (const name of names) {
    const value = evaluate(name, connection);
    if (value !== undefined) fields[name] = value;
  }
  return { fields };
}
