/**
 * OpenTelemetry tracing for a Gearbox process (ext_proc + front door, control plane, edge agent):
 * a tracer provider exporting over OTLP gRPC, sampling parent-based with a ratio for new traces.
 *
 * Disabled (the default) there is no provider and no tracer at all: callers that get
 * `tracer: undefined` skip per-request tracing entirely, so the hot path pays one `undefined`
 * check. No global provider or context manager is installed; spans are parented explicitly.
 */
import type { Tracer } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider, type SpanExporter } from "@opentelemetry/sdk-trace";

/** `telemetry.tracing` of the config (same shape for the edge agent's flags). */
export interface TracingConfig {
  enable: boolean;
  /** OTLP gRPC endpoint (`http://collector:4317`); default `OTEL_EXPORTER_OTLP_ENDPOINT`, else `http://localhost:4317`. */
  endpoint?: string | undefined;
  /** Share of new traces recorded (0…1); a request arriving with a `traceparent` follows its sampled flag. */
  sample_ratio: number;
  /** `service.name` of the spans; default per process (`gearbox`, `gearbox-edge-agent`). */
  service_name?: string | undefined;
}

export interface TracingOptions {
  /** `service.name` when the config names none. */
  defaultServiceName: string;
  env?: NodeJS.ProcessEnv;
  /** Replaces the OTLP exporter (benchmarks measuring the SDK alone, tests). */
  exporter?: SpanExporter;
  /** Batch delay before export (default 1 s; OTel's default is 5 s). */
  scheduledDelayMs?: number;
}

export interface Tracing {
  /** Undefined when tracing is off: nothing to create spans with. */
  readonly tracer: Tracer | undefined;
  /** Where spans go (`off` when disabled), for the startup report. */
  readonly describe: string;
  /** Exports every finished span now. */
  forceFlush(): Promise<void>;
  /** Flushes and stops the exporter; the tracer records nothing afterwards. */
  shutdown(): Promise<void>;
}

export const DEFAULT_OTLP_ENDPOINT = "http://localhost:4317";
const TRACER_NAME = "gearbox";

const OFF: Tracing = Object.freeze({
  tracer: undefined,
  describe: "off",
  forceFlush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
});

/** The tracing of a process from its config; `enable: false` → nothing (see `OFF`). */
export function createTracing(config: TracingConfig, options: TracingOptions): Tracing {
  if (!config.enable) return OFF;
  const env = options.env ?? process.env;
  const endpoint = config.endpoint ?? (env.OTEL_EXPORTER_OTLP_ENDPOINT || DEFAULT_OTLP_ENDPOINT);
  const ratio = Math.min(1, Math.max(0, config.sample_ratio));
  const serviceName = config.service_name ?? options.defaultServiceName;
  const exporter = options.exporter ?? new OTLPTraceExporter({ url: endpoint });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": serviceName }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) }),
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: options.scheduledDelayMs ?? 1_000 })],
  });
  let stopped: Promise<void> | undefined;
  return {
    tracer: provider.getTracer(TRACER_NAME),
    describe: `OTLP gRPC ${options.exporter ? "(custom exporter)" : endpoint}, service ${serviceName}, sample ratio ${ratio} (parent-based)`,
    forceFlush: () => provider.forceFlush(),
    shutdown: () => (stopped ??= provider.shutdown()),
  };
}
