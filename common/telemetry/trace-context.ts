/**
 * W3C trace context (`traceparent`, `tracestate`) in and out of HTTP headers: the parent an
 * incoming request names, and the headers that name a span as the parent of an outgoing call.
 * Every process that takes or makes a traced call uses these (ext_proc, the edge agent).
 */
import { ROOT_CONTEXT, trace, type Context, type Span, type TextMapGetter, type TextMapSetter } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";

/** Header names as Node and the processor hand them over (lower-case; Node may repeat one). */
export type HeaderBag = Readonly<Record<string, string | readonly string[] | undefined>>;

const PROPAGATOR = new W3CTraceContextPropagator();
const GETTER: TextMapGetter<HeaderBag> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key];
    return typeof value === "string" ? value : value?.[0];
  },
};
const SETTER: TextMapSetter<Record<string, string>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

/** The parent context an incoming request names (`traceparent`, `tracestate`); a bad or missing header → the root context. */
export function extractParent(headers: HeaderBag): Context {
  return PROPAGATOR.extract(ROOT_CONTEXT, headers, GETTER);
}

/** `traceparent` (+ `tracestate`) naming `span` as the parent of whatever receives them. */
export function propagationHeaders(span: Span): Record<string, string> {
  const out: Record<string, string> = {};
  PROPAGATOR.inject(trace.setSpan(ROOT_CONTEXT, span), out, SETTER);
  return out;
}
