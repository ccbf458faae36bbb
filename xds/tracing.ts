/**
 * The control plane's spans: edge-agent registration and reports (hello, heartbeat, ACK/NACK on
 * the registry stream), snapshot publication, and each ADS push. Each is its own short trace
 * (sampled by `telemetry.tracing.sample_ratio`); without a tracer nothing is created.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, type Attributes, type Tracer } from "@opentelemetry/api";

/** Records one handled event as a finished span; `error` marks it failed. */
export function recordSpan(
  tracer: Tracer | undefined,
  name: string,
  kind: "server" | "internal" | "producer",
  attributes: () => Attributes,
  error?: string,
): void {
  if (!tracer) return;
  const span = tracer.startSpan(
    name,
    { kind: kind === "server" ? SpanKind.SERVER : kind === "producer" ? SpanKind.PRODUCER : SpanKind.INTERNAL },
    ROOT_CONTEXT,
  );
  if (span.isRecording()) {
    span.setAttributes(attributes());
    if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
  }
  span.end();
}
