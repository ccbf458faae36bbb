/**
 * IP allowlists: CIDRs (IPv4 or IPv6, or a bare address for one host) checked with Node's own
 * `net.BlockList`. IPv4-mapped IPv6 addresses (`::ffff:10.0.0.1`, what a dual-stack socket
 * reports) match IPv4 ranges. Each allowlist is compiled once per list object.
 */
import { BlockList, isIP } from "node:net";

interface Parsed {
  address: string;
  prefix: number;
  family: "ipv4" | "ipv6";
}

function parse(cidr: string): Parsed | undefined {
  const slash = cidr.indexOf("/");
  const address = slash === -1 ? cidr : cidr.slice(0, slash);
  const version = isIP(address);
  if (version === 0) return undefined;
  const max = version === 4 ? 32 : 128;
  const bits = slash === -1 ? String(max) : cidr.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return undefined;
  return { address, prefix: Number(bits), family: version === 4 ? "ipv4" : "ipv6" };
}

/** True for `10.0.0.0/8`, `2001:db8::/32`, `192.0.2.7` (one host); false for anything else. */
export function isCidr(value: string): boolean {
  return parse(value) !== undefined;
}

const compiled = new WeakMap<readonly string[], BlockList>();

function compile(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const p = parse(cidr);
    // Config and admin input are validated with `isCidr`; an invalid entry here admits no one.
    if (p) list.addSubnet(p.address, p.prefix, p.family);
  }
  return list;
}

/** Whether `address` falls in one of `cidrs`. An address that is not an IP is never allowed. */
export function addressAllowed(cidrs: readonly string[], address: string): boolean {
  const version = isIP(address);
  if (version === 0) return false;
  let list = compiled.get(cidrs);
  if (!list) {
    list = compile(cidrs);
    compiled.set(cidrs, list);
  }
  return list.check(address, version === 4 ? "ipv4" : "ipv6");
}
