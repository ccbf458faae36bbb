/** The caller's IP in one spelling, whichever transport reported it. */
import { isIP } from "node:net";

const V4_MAPPED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/**
 * `address` as a canonical IP string: an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`, what a
 * dual-stack socket reports for an IPv4 peer) becomes the IPv4 address, so allowlists see one
 * form. Undefined for anything that is not an IP (a Unix socket path, nothing at all).
 */
export function canonicalIp(address: string | undefined): string | undefined {
  if (address === undefined || isIP(address) === 0) return undefined;
  return V4_MAPPED.exec(address)?.[1] ?? address;
}
