/**
 * What the processor tells its transport to do after each phase, in plain terms. The ext_proc
 * server turns it into `ProcessingResponse` messages; the HTTP front door applies it itself.
 */
import type { ErrorResponse } from "../../common/errors.ts";

export type Headers = Record<string, string>;

export interface Mutation {
  /** Headers to add or overwrite (pseudo-headers such as `:path` included). */
  setHeaders?: Headers;
  removeHeaders?: string[];
  /** Replacement body (or body chunk, when streaming); absent means unchanged. */
  body?: Buffer;
  /** The routing headers changed: the route must be recomputed (Envoy `clear_route_cache`). */
  clearRouteCache?: boolean;
  /**
   * The edge agent (`ip:port` or `[ipv6]:port`) this request goes to. Through Envoy it travels as
   * ext_proc dynamic metadata (`EDGE_ENDPOINT_METADATA`), which the edge route requires and the
   * ORIGINAL_DST cluster dials; never as a header, which a caller could forge. The front door
   * dials it itself.
   */
  edgeEndpoint?: string;
}

export type Outcome = { kind: "continue"; mutation?: Mutation; streamResponseBody?: boolean } | { kind: "respond"; response: ErrorResponse };

export const CONTINUE: Outcome = Object.freeze({ kind: "continue" });
