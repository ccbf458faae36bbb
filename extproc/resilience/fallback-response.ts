/**
 * What the client gets when a fallback answered in place of a failed provider: the failed
 * answer's status, body and provider headers (`retry-after`, rate-limit counters…) replaced by
 * the fallback's answer in the client's schema, with Gearbox's headers saying what happened.
 */
import type { Headers, Mutation, Outcome } from "../processor/outcome.ts";
import { EDGE_PROVIDER, type FallbackAnswer } from "./fallback-call.ts";

/** Headers of the failed answer that still hold for the replacement. */
const KEEP = new Set(["date", "x-request-id"]);

export function fallbackMutation(answer: FallbackAnswer, failedHeaders: Headers, gearboxHeaders: Headers): Mutation {
  const setHeaders: Headers = Object.assign({}, gearboxHeaders, {
    ":status": String(answer.status),
    "content-type": answer.contentType,
    "content-length": String(answer.body.length),
    "x-gearbox-route": answer.decision.provider.name === EDGE_PROVIDER ? "edge" : "cloud",
    "x-gearbox-reason": answer.decision.reason,
  });
  // Envoy refuses to mutate its own `x-envoy-*` headers.
  const removeHeaders = Object.keys(failedHeaders).filter(
    (h) => !h.startsWith(":") && !KEEP.has(h) && !h.startsWith("x-gearbox-") && !h.startsWith("x-envoy-") && setHeaders[h] === undefined,
  );
  return { body: answer.body, setHeaders, removeHeaders };
}

/**
 * The response-headers phase had no body to follow (`end_of_stream`): a replaced answer can only
 * go back as a local reply (ext_proc `immediate_response`).
 */
export function asLocalReply(outcome: Outcome): Outcome {
  if (outcome.kind !== "continue" || outcome.mutation?.body === undefined) return outcome;
  const { ":status": status, ...headers } = outcome.mutation.setHeaders ?? {};
  return { kind: "respond", response: { status: Number(status ?? 200), headers, body: outcome.mutation.body } };
}
