/**
 * `envoy.service.ext_proc.v3.ExternalProcessor/Process`: one bidirectional stream per HTTP
 * request. Each ProcessingRequest gets exactly one ProcessingResponse, in order (Envoy fails the
 * request otherwise), computed by a `RequestProcessor`; the caller's identity comes from the
 * request attributes or, where trusted, the call's XFCC metadata (`attributes.ts`). Plus `grpc.health.v1` and graceful drain.
 */
import * as grpc from "@grpc/grpc-js";
import { HealthImplementation } from "grpc-health-check";
import type { ProcessingRequest__Output } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingRequest.ts";
import type { ProcessingResponse } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingResponse.ts";
import { extProcPackage } from "../../common/envoy/protos.ts";
import { asGatewayError, GatewayError } from "../../common/errors.ts";
import { RequestProcessor, type ProcessorDeps } from "../processor/processor.ts";
import { CONTINUE, type Outcome } from "../processor/outcome.ts";
import { clientIdentityOf, forwardedPrincipalOf } from "./attributes.ts";
import { ObservedRequestBody } from "./observed-body.ts";
import { headersFromEnvoy, toProcessingResponse, type RequestPhase } from "./messages.ts";
import { ExtProcStreamStats } from "./stream-stats.ts";
import { isPending, type Step } from "../../common/step.ts";

export const EXT_PROC_SERVICE = "envoy.service.ext_proc.v3.ExternalProcessor";

type ProcessStream = grpc.ServerDuplexStream<ProcessingRequest__Output, ProcessingResponse>;

export interface ExtProcServer {
  port: number;
  stats: ExtProcStreamStats;
  /** Stops taking new streams, lets open ones finish (up to `graceMs`), then closes. */
  drain(graceMs?: number): Promise<void>;
}

/**
 * How long Envoy should wait for an answer that needs a cloud call (a cascade upgrade), sent as
 * `override_message_timeout` once the phase has been pending for `SLOW_PHASE_NOTICE_MS`. Envoy honours it up to the filter's
 * `max_message_timeout` (120 s in `envoy/`).
 */
export const SLOW_PHASE_TIMEOUT_S = 60;

/**
 * How long a pending phase may take before Gearbox asks Envoy for `SLOW_PHASE_TIMEOUT_S`: most
 * pending phases (admission, an in-memory store) settle in microseconds, and a message per
 * request to say "wait" would cost more than the phase. 50 ms is a quarter of Envoy's default
 * `message_timeout` (200 ms), the tightest an operator would set; `envoy/` ships 2 s.
 */
export const SLOW_PHASE_NOTICE_MS = 50;

/** Runs one processor phase for one message. */
function runPhase(
  processor: RequestProcessor,
  message: ProcessingRequest__Output,
  forwardedPrincipal: string | undefined,
): { phase: RequestPhase; outcome: Step<Outcome> } {
  switch (message.request) {
    case "request_headers":
      return {
        phase: "request_headers",
        outcome: processor.requestHeaders(
          headersFromEnvoy(message.request_headers?.headers),
          message.request_headers?.end_of_stream ?? false,
          clientIdentityOf(message, forwardedPrincipal),
        ),
      };
    case "request_body":
      return { phase: "request_body", outcome: processor.requestBody(message.request_body?.body ?? Buffer.alloc(0)) };
    case "response_headers":
      return {
        phase: "response_headers",
        outcome: processor.responseHeaders(headersFromEnvoy(message.response_headers?.headers), message.response_headers?.end_of_stream ?? false),
      };
    case "response_body":
      return {
        phase: "response_body",
        outcome: processor.responseBody(message.response_body?.body ?? Buffer.alloc(0), message.response_body?.end_of_stream ?? false),
      };
    case "request_trailers":
      return { phase: "request_trailers", outcome: CONTINUE };
    case "response_trailers":
      return { phase: "response_trailers", outcome: CONTINUE };
    case undefined:
      throw new Error("ProcessingRequest without a request");
    default:
      return message.request satisfies never;
  }
}

/** A bug in a phase must not break the mesh: refuse requests cleanly, let responses through. */
function outcomeForFault(phase: RequestPhase, err: unknown, processor: RequestProcessor): Outcome {
  const requestSide = phase === "request_headers" || phase === "request_body";
  return requestSide ? { kind: "respond", response: processor.errorResponse(err) } : CONTINUE;
}

/**
 * Releases a stream nobody speaks on for `idleMs` (`extproc.stream_idle_ms`): Envoy ends a live
 * request's stream itself (HCM `stream_idle_timeout`, a reset → `cancelled`), so a stream silent
 * past that is one Envoy forgot (a half-open connection keepalive has not caught, a filter stuck
 * upstream of the router). It ends with DEADLINE_EXCEEDED, which Envoy treats as a stream error
 * (500, or continue with `failure_mode_allow`), and the request is recorded as a 504.
 */
function idleRelease(
  deps: ProcessorDeps,
  call: ProcessStream,
  processor: RequestProcessor,
  stats: ExtProcStreamStats,
): { touch(): void; stop(): void; readonly released: boolean } {
  const idleMs = deps.runtime.current().config.extproc.stream_idle_ms;
  let released = false;
  const timer = setTimeout(() => {
    released = true;
    stats.idleReleased++;
    deps.logger.warn({ request_id: processor.id || undefined, idle_ms: idleMs }, "ext_proc stream idle: released");
    processor.fail(new GatewayError(504, "timeout_error", `The ext_proc stream was idle for ${idleMs} ms.`, { code: "extproc_stream_idle" }));
    call.emit("error", { code: grpc.status.DEADLINE_EXCEEDED, details: `gearbox: ext_proc stream idle for ${idleMs} ms` });
  }, idleMs);
  timer.unref();
  return {
    touch: () => void (released || timer.refresh()),
    stop: () => clearTimeout(timer),
    get released() {
      return released;
    },
  };
}

function handleStream(deps: ProcessorDeps, call: ProcessStream, stats: ExtProcStreamStats): void {
  const processor = new RequestProcessor(deps);
  const idle = idleRelease(deps, call, processor, stats);
  // The calling sidecar's SPIFFE ID as the ext_proc pod's own sidecar saw it (one per stream).
  const forwardedPrincipal = forwardedPrincipalOf(call.metadata, deps.runtime.current().config.extproc.trust_xfcc);
  let observed: ObservedRequestBody | undefined;
  // Answers must go back one per message and in order; a phase that awaits (a cloud upgrade)
  // holds the messages behind it in this queue.
  let pending: Promise<void> | undefined;
  const answer = (message: ProcessingRequest__Output): void | Promise<void> => {
    let phase: RequestPhase = "request_headers";
    // The answer's last message: the request's record waits until this reply has left.
    const last = message.request === "response_body" && message.response_body?.end_of_stream === true;
    if (last) processor.holdRecord();
    const reply = (response: ProcessingResponse) => {
      // Observability mode is send-and-go: Envoy ignores responses, so none are sent.
      if (!idle.released && !message.observability_mode) {
        idle.touch();
        call.write(response);
      }
      // HTTP/2 sends what was written at the loop's next check phase, before JavaScript's
      // immediates: the record (limits settled, log line, metrics) is made once the answer left.
      if (last) setImmediate(() => processor.releaseRecord());
    };
    const fault = (err: unknown) => {
      deps.logger.error({ err, request_id: processor.id, phase }, "ext_proc phase failed");
      // The request is still recorded (500 internal_error): a fault never makes one vanish.
      try {
        processor.fail(asGatewayError(err, processor.id));
      } catch (recordErr) {
        deps.logger.error({ err: recordErr, request_id: processor.id }, "ext_proc: recording a failed request failed");
      }
      reply(toProcessingResponse(phase, outcomeForFault(phase, err, processor)));
    };
    try {
      const result = runPhase(processor, message, forwardedPrincipal);
      phase = result.phase;
      const outcome = result.outcome;
      if (!isPending(outcome)) return reply(toProcessingResponse(phase, outcome));
      const slow = setTimeout(() => reply({ override_message_timeout: { seconds: String(SLOW_PHASE_TIMEOUT_S) } }), SLOW_PHASE_NOTICE_MS);
      return outcome.then(
        (o) => {
          clearTimeout(slow);
          reply(toProcessingResponse(phase, o));
        },
        (err: unknown) => {
          clearTimeout(slow);
          fault(err);
        },
      );
    } catch (err) {
      fault(err);
    }
  };
  call.on("data", (received: ProcessingRequest__Output) => {
    if (idle.released) return;
    idle.touch();
    if (received.observability_mode && !observed) {
      // Envoy ignores every answer: Gearbox only observes (shadow mode) this request.
      processor.observeOnly();
      observed = new ObservedRequestBody(deps.runtime.current().config.limits.max_request_bytes);
    }
    const message = observed ? observed.take(received) : received;
    if (!message) return;
    if (pending) {
      pending = pending.then(() => answer(message));
      return;
    }
    const result = answer(message);
    if (result) pending = result.finally(() => (pending = undefined));
  });
  call.on("end", () => {
    idle.stop();
    if (idle.released) return;
    if (pending) void pending.then(() => call.end());
    else call.end();
  });
  // A stream that ends before its last answer went out still leaves its record.
  call.on("error", (err) => {
    idle.stop();
    processor.abort(`ext_proc stream error: ${err.message}`);
    processor.releaseRecord();
  });
  call.on("cancelled", () => {
    idle.stop();
    processor.abort("ext_proc stream cancelled by Envoy");
    processor.releaseRecord();
  });
}

export async function startExtProcServer(deps: ProcessorDeps, port: number, host = "0.0.0.0", stats = new ExtProcStreamStats()): Promise<ExtProcServer> {
  const maxMessage = deps.runtime.current().config.limits.max_request_bytes + 1024 * 1024;
  const server = new grpc.Server({
    "grpc.max_receive_message_length": maxMessage,
    "grpc.max_send_message_length": -1,
    "grpc.keepalive_time_ms": 30_000,
    "grpc.keepalive_permit_without_calls": 1,
  });
  const health = new HealthImplementation({ "": "SERVING", [EXT_PROC_SERVICE]: "SERVING" });
  health.addToServer(server);
  server.addService(extProcPackage().envoy.service.ext_proc.v3.ExternalProcessor.service, {
    Process: (call: ProcessStream) => handleStream(deps, call, stats),
  });
  const bound = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host}:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  return {
    port: bound,
    stats,
    drain: (graceMs = 10_000) =>
      new Promise<void>((resolve) => {
        health.setStatus("", "NOT_SERVING");
        health.setStatus(EXT_PROC_SERVICE, "NOT_SERVING");
        const timer = setTimeout(() => server.forceShutdown(), graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}
