/**
 * An ordered, multi-valued header map with lower-case keys and pseudo-headers first, like Envoy's
 * `Http::HeaderMapImpl`, plus its conversions to the ext_proc wire format and to Node's HTTP API.
 */
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from "node:http";
import type { HeaderMap as ProtoHeaderMap } from "../../proto/generated/envoy/config/core/v3/HeaderMap.ts";

/** Hop-by-hop headers Envoy's connection manager and codecs never pass through as headers. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"]);

/** An ordered multi-map of lower-case header names to values. */
export class HeaderMap {
  private entries: Array<[string, string]> = [];

  /** Builds a map from `[name, value]` pairs (names are lower-cased). */
  static of(pairs: Iterable<readonly [string, string]>): HeaderMap {
    const map = new HeaderMap();
    for (const [k, v] of pairs) map.add(k, v);
    return map;
  }

  /** First value of `name`, if any. */
  get(name: string): string | undefined {
    const key = name.toLowerCase();
    return this.entries.find(([k]) => k === key)?.[1];
  }

  /** All values of `name`, in order. */
  getAll(name: string): string[] {
    const key = name.toLowerCase();
    return this.entries.filter(([k]) => k === key).map(([, v]) => v);
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /** Appends an entry; pseudo-headers go before the first regular header. */
  add(name: string, value: string): void {
    const key = name.toLowerCase();
    if (key.startsWith(":")) {
      const firstRegular = this.entries.findIndex(([k]) => !k.startsWith(":"));
      if (firstRegular >= 0) {
        this.entries.splice(firstRegular, 0, [key, value]);
        return;
      }
    }
    this.entries.push([key, value]);
  }

  /** Replaces every value of `name` by one (Envoy `setCopy`): the first entry keeps its place. */
  set(name: string, value: string): void {
    const key = name.toLowerCase();
    const index = this.entries.findIndex(([k]) => k === key);
    if (index < 0) {
      this.add(key, value);
      return;
    }
    this.entries[index] = [key, value];
    this.entries = this.entries.filter(([k], i) => k !== key || i === index);
  }

  /** Removes every value of `name`; returns whether there was one. */
  remove(name: string): boolean {
    const key = name.toLowerCase();
    const before = this.entries.length;
    this.entries = this.entries.filter(([k]) => k !== key);
    return this.entries.length !== before;
  }

  /** The entries, in order. */
  list(): ReadonlyArray<readonly [string, string]> {
    return this.entries;
  }

  clone(): HeaderMap {
    return HeaderMap.of(this.entries);
  }

  /** The ext_proc `HeaderMap`, values in `raw_value` (Envoy's `send_header_raw_value`); empty ones off the wire. */
  toProto(): ProtoHeaderMap {
    return {
      headers: this.entries.map(([key, value]) => (value === "" ? { key } : { key, raw_value: Buffer.from(value, "latin1") })),
    };
  }

  /** Regular headers for Node's `writeHead` / `http.request` (repeated names become arrays). */
  toOutgoing(): OutgoingHttpHeaders {
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of this.entries) {
      if (k.startsWith(":")) continue;
      const prev = out[k];
      if (prev === undefined) out[k] = v;
      else out[k] = Array.isArray(prev) ? [...prev, v] : [prev, v];
    }
    return out;
  }

  /** Plain object view (first value per name) for asserts and logs. */
  toObject(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of this.entries) out[k] ??= v;
    return out;
  }
}

/** Lower-cased `[name, value]` pairs of a Node message, in wire order. */
export function rawHeaderPairs(message: IncomingMessage): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  const raw = message.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) pairs.push([(raw[i] ?? "").toLowerCase(), raw[i + 1] ?? ""]);
  return pairs;
}

/** Whether a header is hop-by-hop (never forwarded as a header by Envoy's HTTP/1 codec). */
export function isHopByHop(name: string, value: string): boolean {
  // Envoy removes `te` unless it only asks for trailers (ConnectionManagerUtility::mutateRequestHeaders).
  if (name === "te") return value.trim().toLowerCase() !== "trailers";
  return HOP_BY_HOP.has(name);
}

/** `content-length` as a number, or undefined when absent or not a plain decimal. */
export function contentLengthOf(headers: HeaderMap | IncomingHttpHeaders): number | undefined {
  const value = headers instanceof HeaderMap ? headers.get("content-length") : headers["content-length"];
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  return Number(value);
}
