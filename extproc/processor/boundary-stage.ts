/**
 * The data boundary's part in the request phase (`extproc/boundary/` does the work): the body
 * screened before the cache and the route, the route told when the request stays on the edge,
 * whole answers restored (streams are restored in `response-phase.ts`, chunk by chunk).
 */
import type { JsonObject } from "../../common/schemas/fields.ts";
import { edgeOnlyUnavailable, screen, type Screened } from "../boundary/stage.ts";
import type { RouteFacts } from "../routing/route.ts";
import type { RequestContext } from "./context.ts";
import type { Headers, Mutation, Outcome } from "./outcome.ts";

export function screenRequest(ctx: RequestContext, endpoint: string, json: JsonObject): Screened {
  const screened = screen(ctx.config.data_boundary, ctx.caller?.tenant.id ?? "default", endpoint, json, ctx.body);
  if (screened.kind === "screened") ctx.boundary = screened.state;
  return screened;
}

/** `facts` with the boundary's: an edge-only request is forced to the edge, no upgrade, no cloud. */
export function boundaryFacts(ctx: RequestContext, facts: RouteFacts): RouteFacts {
  const category = ctx.boundary?.edgeOnly;
  return category ? Object.assign({}, facts, { edgeOnly: edgeOnlyUnavailable(category) }) : facts;
}

/** A whole answer's mutation with the placeholders restored (`body`: the answer as it came, when the mutation has none) and the redaction header. */
export function restoredMutation(ctx: RequestContext, mutation: Mutation | undefined, body: Buffer): Mutation | undefined {
  const boundary = ctx.boundary;
  if (!boundary) return mutation;
  const source = mutation?.body ?? body;
  const restored = boundary.restoreBody(source);
  const setHeaders: Headers = { ...mutation?.setHeaders, ...boundary.headers() };
  if (restored === source && mutation?.body === undefined) return Object.assign({}, mutation, { setHeaders });
  setHeaders["content-length"] = String(restored.length);
  return Object.assign({}, mutation, { setHeaders, body: restored });
}

/** An edge verdict (the edge's answer or the cloud's upgrade) restored: a continue's mutation, a response's body. */
export function restoredOutcome(ctx: RequestContext, outcome: Outcome): Outcome {
  const boundary = ctx.boundary;
  if (!boundary) return outcome;
  if (outcome.kind === "continue") return Object.assign({}, outcome, { mutation: restoredMutation(ctx, outcome.mutation, Buffer.alloc(0)) });
  if (outcome.kind !== "respond") return outcome;
  const body = boundary.restoreBody(Buffer.isBuffer(outcome.response.body) ? outcome.response.body : Buffer.from(String(outcome.response.body)));
  const headers = Object.assign({}, outcome.response.headers, boundary.headers(), { "content-length": String(body.length) });
  return Object.assign({}, outcome, { response: { ...outcome.response, body, headers } });
}
