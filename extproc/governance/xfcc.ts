/**
 * `x-forwarded-client-cert` (XFCC), as Envoy writes it
 * (https://www.envoyproxy.io/docs/envoy/latest/configuration/http/http_conn_man/headers#x-forwarded-client-cert):
 * comma-separated elements, one per proxy that terminated an mTLS connection, each a
 * semicolon-separated list of `Key=value` pairs (`By`, `Hash`, `Cert`, `Chain`, `Subject`, `URI`,
 * `DNS`; keys case-insensitive, a key may repeat, e.g. one `URI` per URI SAN). A value holding
 * `,`, `;` or `=` is double-quoted, and a `"` inside it is written `\"`.
 *
 * Envoy appends its element at the end (`APPEND_FORWARD`), so the last element is the nearest
 * hop: in an Istio sidecar's inbound listener (`forward_client_cert_details: APPEND_FORWARD`,
 * `set_current_client_cert_details: { subject, uri, dns }`) it is the peer that dialled this pod
 * over mTLS. Without mTLS Envoy forwards the header untouched, so the header is only worth
 * anything where every connection to the port is mTLS (a STRICT PeerAuthentication).
 */
import { fail, ok, type Result } from "../../common/result.ts";

/** One proxy's element: its pairs in order, keys in lower case, values unquoted. */
export type XfccElement = ReadonlyArray<readonly [key: string, value: string]>;

/** Splits `text` at `separator` outside double quotes (a `\` escapes the next character inside them). */
function splitOutsideQuotes(text: string, separator: string): Result<string[]> {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted && c === "\\") i++;
    else if (c === '"') quoted = !quoted;
    else if (!quoted && c === separator) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  if (quoted) return fail("unterminated quoted value");
  parts.push(text.slice(start));
  return ok(parts);
}

function unquote(value: string): Result<string> {
  if (!value.startsWith('"')) return value.includes('"') ? fail("stray double quote") : ok(value);
  if (value.length < 2 || !value.endsWith('"')) return fail("unterminated quoted value");
  return ok(value.slice(1, -1).replace(/\\(.)/g, "$1"));
}

function parseElement(text: string): Result<XfccElement> {
  const pairs = splitOutsideQuotes(text, ";");
  if (!pairs.ok) return pairs;
  const element: Array<readonly [string, string]> = [];
  for (const pair of pairs.value) {
    const eq = pair.indexOf("=");
    const key = pair.slice(0, eq).trim().toLowerCase();
    if (eq <= 0 || !/^[a-z]+$/.test(key)) return fail(`malformed pair '${pair.slice(0, 40)}'`);
    const value = unquote(pair.slice(eq + 1).trim());
    if (!value.ok) return value;
    element.push([key, value.value]);
  }
  return ok(element);
}

/** Every element of an XFCC header, first (farthest) to last (nearest); any malformed part fails the whole header. */
export function parseXfcc(header: string): Result<XfccElement[]> {
  const elements = splitOutsideQuotes(header, ",");
  if (!elements.ok) return elements;
  const parsed: XfccElement[] = [];
  for (const text of elements.value) {
    if (text.trim() === "") return fail("empty element");
    const element = parseElement(text);
    if (!element.ok) return element;
    parsed.push(element.value);
  }
  return ok(parsed);
}

/**
 * The workload identity of the nearest client: the first `URI` (Envoy's
 * `connection.uri_san_peer_certificate` is the first URI SAN too) of the last element, when it
 * is a SPIFFE ID. Undefined for an absent, malformed or URI-less header: a header Gearbox cannot
 * read names nobody.
 */
export function principalFromXfcc(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const parsed = parseXfcc(header);
  if (!parsed.ok) return undefined;
  const uri = parsed.value.at(-1)?.find(([key]) => key === "uri")?.[1];
  return uri?.startsWith("spiffe://") ? uri : undefined;
}
