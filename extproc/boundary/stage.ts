/**
 * The data boundary in a request's life (the processor calls only these): the request body
 * screened before the cache and the route (`screen`), the route told when the request must stay
 * on the edge, answers restored (`restoreBody`, `restoreStream`), the header and the log's counts.
 */
import { GatewayError } from "../../common/errors.ts";
import type { JsonObject } from "../../common/schemas/fields.ts";
import type { Category } from "./detect.ts";
import { countsHeader, maskBody, maskEvery, Masker, scanBody, type Counts } from "./mask.ts";
import { boundaryPolicy, type BoundaryPolicy, type DataBoundaryConfig } from "./policy.ts";
import { StreamRestorer } from "./stream-restore.ts";

export const REDACTED_HEADER = "x-gearbox-redacted";

/** The request log's `data_boundary` field: counts by category, never a value. */
export interface BoundaryLog {
  action: "redact" | "edge_only";
  /** Set for `edge_only`: the category that kept it there (or `detector_error`). */
  reason: string | undefined;
  counts: Counts;
}

/** What the boundary did to one request. */
export class BoundaryState {
  private stream: StreamRestorer | undefined;
  private storeMasker: Masker | undefined;

  constructor(
    readonly counts: Counts,
    /** Set → the request stays on the edge (the category, or `detector_error`). */
    readonly edgeOnly: Category | "detector_error" | undefined,
    readonly masker: Masker | undefined,
    private readonly policy: BoundaryPolicy,
  ) {}

  /** Another body of the same request (a conversation's history fitted to the route) masked with the same placeholders; a value new to it fails closed. */
  remask(body: JsonObject): JsonObject {
    return this.masker ? (maskBody(body, this.policy, this.masker) as JsonObject) : body;
  }

  /**
   * `text` as a store may keep it when the tenant keeps no originals: every detected value the
   * policy does not allow replaced by a placeholder of this request (never restored later: the
   * next request's placeholders carry another nonce, so a stored one stays text).
   */
  forStore(text: string): string {
    this.storeMasker ??= this.masker ?? new Masker(text);
    return maskEvery(text, this.policy, this.storeMasker);
  }

  log(): BoundaryLog {
    return { action: this.masker ? "redact" : "edge_only", reason: this.edgeOnly, counts: this.counts };
  }

  /** `x-gearbox-redacted: email=2,phone=1` when values were masked. */
  headers(): Record<string, string> {
    return this.masker ? { [REDACTED_HEADER]: countsHeader(this.counts) } : {};
  }

  /** A whole answer (JSON or SSE) with the placeholders restored. */
  restoreBody(body: Buffer): Buffer {
    return this.masker ? this.masker.restoreBody(body) : body;
  }

  /** One chunk of a streamed SSE answer, restored; a partial placeholder waits for the next chunk. */
  restoreStream(chunk: Buffer, end: boolean): Buffer {
    if (!this.masker) return chunk;
    this.stream ??= new StreamRestorer(this.masker);
    return this.stream.push(chunk, end);
  }
}

export type Screened = { kind: "clean" } | { kind: "refused"; error: GatewayError } | { kind: "screened"; state: BoundaryState; body?: JsonObject };

/** Screens a parsed request body under the tenant's and endpoint's policy. */
export function screen(config: DataBoundaryConfig, tenant: string, endpoint: string, json: JsonObject, raw: Buffer | undefined): Screened {
  const policy = boundaryPolicy(config, tenant, endpoint);
  if (!policy?.active) return { kind: "clean" };
  const scan = scanBody(json, policy, raw ? raw.toString("utf8") : JSON.stringify(json));
  switch (scan.kind) {
    case "clean":
      return scan;
    case "block":
      return { kind: "refused", error: blocked(scan.category) };
    case "edge_only":
      return { kind: "screened", state: new BoundaryState(scan.counts, scan.category, undefined, policy) };
    case "redacted":
      return { kind: "screened", state: new BoundaryState(scan.counts, undefined, scan.masker, policy), body: scan.body as JsonObject };
    default:
      return scan satisfies never;
  }
}

/** The refusal of a blocked category: names it, never the value. */
export function blocked(category: Category): GatewayError {
  return new GatewayError(
    403,
    "permission_error",
    `The request carries data of category '${category}', which this tenant's data boundary does not let leave; remove it and retry.`,
    { code: `data_boundary_${category}` },
  );
}

/** An edge-only request no edge agent can take (or one the edge cannot serve: tools, another endpoint): never the cloud. */
export function edgeOnlyUnavailable(category: string): GatewayError {
  return new GatewayError(
    503,
    "server_error",
    `The request carries data of category '${category}' that must stay on the edge, and no edge model can take it; it was not sent to any cloud provider.`,
    { code: "data_boundary_edge_only" },
  );
}
