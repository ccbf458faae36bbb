/**
 * JSON an upstream sent, read in one place for every backend. A body or stream event that must
 * be JSON and is not, or that parses but is not what the provider's API promises, is one 502
 * with one code, `upstream_malformed`, whichever provider sent it. Error bodies (status >= 400)
 * may be plain text: `readUpstreamJson` answers `undefined` for those instead of failing.
 */
import { GatewayError } from "../../common/errors.ts";
import { ok } from "../../common/result.ts";

/** The one `code` a client sees for an upstream body that is not what its API promises. */
export const UPSTREAM_MALFORMED = "upstream_malformed";

/** A 502 `upstream_malformed` with `message` as the client sees it. */
export function upstreamMalformed(message: string, cause?: unknown): GatewayError {
  return new GatewayError(502, "upstream_error", message, { code: UPSTREAM_MALFORMED, cause });
}

/** A `Result` whose failure holds exactly one error, so a stream decoder can throw `errors[0]`. */
export type UpstreamJson = { ok: true; value: unknown } | { ok: false; errors: [GatewayError] };

/**
 * Parses what an upstream sent where its API promises JSON. Not JSON → a 502 `upstream_malformed`:
 * "`source` sent a malformed `what` (invalid JSON)." (`source` defaults to "The upstream").
 */
export function parseUpstreamJson(text: string | Buffer, what: string, source = "The upstream"): UpstreamJson {
  try {
    return ok(JSON.parse(typeof text === "string" ? text : text.toString("utf8")) as unknown);
  } catch (err) {
    return { ok: false, errors: [upstreamMalformed(`${source} sent a malformed ${what} (invalid JSON).`, err)] };
  }
}

/** What an upstream sent, parsed, or `undefined` when it is not JSON (error bodies, pass-through). */
export function readUpstreamJson(text: string | Buffer): unknown {
  try {
    return JSON.parse(typeof text === "string" ? text : text.toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}
