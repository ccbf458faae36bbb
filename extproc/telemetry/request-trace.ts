/**
 * One request's trace, as the processor (and the cascade) see it: a SERVER root span continued
 * from the incoming W3C `traceparent` (a missing or malformed one starts a new trace), INTERNAL
 * child spans for the phases, CLIENT child spans for the calls Gearbox makes or steers (edge,
 * cloud, the cascade's upgrade), and the headers that carry the trace upstream and back.
 *
 * Spans are parented explicitly (`trace.setSpan(context, span)`), never through a global context
 * manager. An unsampled request still has a trace id (propagated with the sampled flag off) but
 * records nothing; attribute objects are only built for recording spans.
 */
import { SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from "@opentelemetry/api";
import { HTTP } from "../../common/telemetry/tracing-attributes.ts";
import { extractParent, propagationHeaders, type HeaderBag } from "../../common/telemetry/trace-context.ts";

/** The response header that gives the client its trace id (`traceresponse` carries it W3C-style too). */
export const TRACE_ID_HEADER = "x-gearbox-trace-id";
export const TRACE_RESPONSE_HEADER = "traceresponse";

/** What ended a span badly: a `GatewayError` fits, so does a plain description. */
export interface SpanError {
  message: string;
  status?: number;
  type?: string;
  code?: string | null | undefined;
}

/** One span of a request's trace; `end` is idempotent. */
export class TraceSpan {
  private ended = false;

  constructor(
    readonly span: Span,
    /** The context that makes this span the parent of new ones. */
    readonly context: Context,
  ) {}

  /** False for unsampled requests: build attribute objects only when this is true. */
  get recording(): boolean {
    return !this.ended && this.span.isRecording();
  }

  get isEnded(): boolean {
    return this.ended;
  }

  set(attributes: Attributes): this {
    if (this.recording) this.span.setAttributes(attributes);
    return this;
  }

  event(name: string, attributes?: Attributes): this {
    if (this.recording) this.span.addEvent(name, attributes);
    return this;
  }

  /** `traceparent` (+ `tracestate`) making this span the parent of the receiver's spans. */
  headers(): Record<string, string> {
    return propagationHeaders(this.span);
  }

  end(error?: SpanError, attributes?: Attributes): void {
    if (this.ended) return;
    if (this.span.isRecording()) {
      if (attributes) this.span.setAttributes(attributes);
      if (error) {
        this.span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
        this.span.setAttribute(HTTP.errorType, error.code ?? error.type ?? (error.status !== undefined ? String(error.status) : "error"));
      }
    }
    this.ended = true;
    this.span.end();
  }
}

export class RequestTrace {
  /** Children still open; `end` closes them (a phase cut short by a reject or an abort). */
  private readonly children: TraceSpan[] = [];
  private stepSpan: TraceSpan | undefined;
  /** The call the request itself went upstream on (edge agent or cloud provider), once sent. */
  upstream: TraceSpan | undefined;

  private constructor(
    private readonly tracer: Tracer,
    readonly root: TraceSpan,
  ) {}

  /**
   * Starts a request's trace continuing `headers`' `traceparent`; undefined without a tracer
   * (tracing off), so `this.trace?.…` costs nothing then.
   */
  static start(tracer: Tracer | undefined, headers: HeaderBag, name: string, attributes?: Attributes): RequestTrace | undefined {
    if (!tracer) return undefined;
    const parent = extractParent(headers);
    const span = tracer.startSpan(name, { kind: SpanKind.SERVER, ...(attributes && { attributes }) }, parent);
    return new RequestTrace(tracer, new TraceSpan(span, trace.setSpan(parent, span)));
  }

  /** 32 lower-case hex digits. */
  get traceId(): string {
    return this.root.span.spanContext().traceId;
  }

  get sampled(): boolean {
    return this.root.span.isRecording();
  }

  /** An INTERNAL span for a phase (parse, decision, admission, response…), under `parent` or the root. */
  phase(name: string, attributes?: Attributes, parent: TraceSpan = this.root): TraceSpan {
    return this.child(name, SpanKind.INTERNAL, attributes, parent);
  }

  /** A CLIENT span for a call that leaves Gearbox (edge agent, cloud provider, the cascade's upgrade). */
  call(name: string, attributes?: Attributes, parent: TraceSpan = this.root): TraceSpan {
    return this.child(name, SpanKind.CLIENT, attributes, parent);
  }

  /**
   * Sequential phases in one line each: ends the phase in progress (if any) and starts `name`
   * under the root. A phase still open when the request ends is ended with it.
   */
  step(name: string, attributes?: Attributes): TraceSpan {
    this.stepSpan?.end();
    this.stepSpan = this.phase(name, attributes);
    return this.stepSpan;
  }

  /** Ends the phase in progress, with what it found. */
  endStep(attributes?: Attributes): void {
    this.stepSpan?.end(undefined, attributes);
    this.stepSpan = undefined;
  }

  /** The phase in progress, else the root: the parent for work done within it. */
  get current(): TraceSpan {
    return this.stepSpan && !this.stepSpan.isEnded ? this.stepSpan : this.root;
  }

  /** Headers naming `span` (default: the root) as the upstream's parent. */
  propagation(span: TraceSpan = this.root): Record<string, string> {
    return span.headers();
  }

  /** Headers that give the client its trace id: `x-gearbox-trace-id` and W3C `traceresponse`. */
  responseHeaders(): Record<string, string> {
    const context = this.root.span.spanContext();
    const flags = (context.traceFlags & 1) === 1 ? "01" : "00";
    return { [TRACE_ID_HEADER]: context.traceId, [TRACE_RESPONSE_HEADER]: `00-${context.traceId}-${context.spanId}-${flags}` };
  }

  set(attributes: Attributes): void {
    this.root.set(attributes);
  }

  /** Ends whatever is still open, then the root, with the request's final attributes. */
  end(error?: SpanError, attributes?: Attributes): void {
    if (this.root.isEnded) return;
    for (const child of this.children)
      if (!child.isEnded) child.end(error ? { message: `ended early: ${error.message}`, ...(error.code != null && { code: error.code }) } : undefined);
    this.children.length = 0;
    this.root.end(error, attributes);
  }

  private child(name: string, kind: SpanKind, attributes: Attributes | undefined, parent: TraceSpan): TraceSpan {
    // Nothing hangs off a finished request (a late phase after a reject or a shadowed request).
    if (this.root.isEnded) return this.root;
    const span = this.tracer.startSpan(name, { kind, ...(attributes && parent.recording && { attributes }) }, parent.context);
    const child = new TraceSpan(span, trace.setSpan(parent.context, span));
    this.children.push(child);
    return child;
  }
}
