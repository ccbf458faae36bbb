/**
 * The ext_proc filter's side-stream protocol: sending messages, matching responses to the calls in
 * flight, message timeouts, mode overrides, immediate responses, and the failure paths (spurious
 * message, stream error, clean close, timeout) with and without `failure_mode_allow`.
 *
 * Copies `Filter::onReceiveMessage`, `onGrpcError`, `onGrpcCloseWithStatus`, `onMessageTimeout`,
 * `onNewTimeout`, `handleErrorResponse`, `sendImmediateResponse` and
 * `closeGrpcStreamIfLastRespReceived` of envoyproxy/envoy
 * `source/extensions/filters/http/ext_proc/ext_proc.cc`.
 */
import type * as grpc from "@grpc/grpc-js";
import type { CommonResponse__Output } from "../../proto/generated/envoy/service/ext_proc/v3/CommonResponse.ts";
import type { ExternalProcessorClient } from "../../proto/generated/envoy/service/ext_proc/v3/ExternalProcessor.ts";
import type { HeaderMutation__Output } from "../../proto/generated/envoy/service/ext_proc/v3/HeaderMutation.ts";
import type { ImmediateResponse__Output } from "../../proto/generated/envoy/service/ext_proc/v3/ImmediateResponse.ts";
import type { ProcessingRequest } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingRequest.ts";
import type { ProcessingResponse__Output } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingResponse.ts";
import type { Duration__Output } from "../../proto/generated/google/protobuf/Duration.ts";
import { evaluateAttributes, EXT_PROC_FILTER_NAME, type DownstreamConnection } from "./attributes.ts";
import { resolveProcessingMode, type ResolvedExtProc, type ResolvedProcessingMode } from "./config.ts";
import type { DynamicMetadata } from "./dynamic-metadata.ts";
import type { HeaderMap } from "./headers.ts";
import { httpStatusNumber } from "./messages.ts";
import { applyHeaderMutation, type MutationChecker } from "./mutations.ts";
import { ProcessorState, type Outcome } from "./processor-state.ts";
import { SideStream, type StreamRegistry } from "./side-stream.ts";
import type { EnvoyStats, IgnoreReason, RequestKind } from "./stats.ts";

/** What every filter instance of one harness shares. */
export interface FilterEnv {
  config: ResolvedExtProc;
  stats: EnvoyStats;
  client: ExternalProcessorClient;
  registry: StreamRegistry;
  checker: MutationChecker;
  bufferLimitBytes: number;
}

/** A response made by Envoy itself (`sendLocalReply`). */
export interface LocalReply {
  status: number;
  body: Buffer;
  /** Response code details, as Envoy logs them. */
  details: string;
  /** Changes to the default local-reply headers (an ImmediateResponse's `headers`). */
  mutateHeaders?: (headers: HeaderMap) => void;
}

/** The HTTP stream around the filter. */
export interface FilterHost {
  /** A local reply if the response has not started downstream, else a stream reset. */
  localReply(reply: LocalReply): void;
  /** `clearRouteCache()`: the router recomputes the route from the current request headers. */
  clearRouteCache(): void;
  /** The stream's dynamic metadata (decoder and encoder callbacks share one StreamInfo). */
  readonly metadata: DynamicMetadata;
}

/** DEFAULT header modes in a mode_override keep the configured ones; body modes are explicit. */
function effectiveModeOverride(target: ResolvedProcessingMode, configured: ResolvedProcessingMode): ResolvedProcessingMode {
  const pick = <K extends keyof ResolvedProcessingMode>(key: K): ResolvedProcessingMode[K] => (target[key] === "DEFAULT" ? configured[key] : target[key]);
  return {
    request_header_mode: pick("request_header_mode"),
    response_header_mode: pick("response_header_mode"),
    request_trailer_mode: pick("request_trailer_mode"),
    response_trailer_mode: pick("response_trailer_mode"),
    request_body_mode: target.request_body_mode,
    response_body_mode: target.response_body_mode,
  };
}

function durationMs(d: Duration__Output): number {
  return Number(d.seconds ?? 0) * 1000 + (d.nanos ?? 0) / 1e6;
}

/** The protocol half of the filter; `ExtProcFilter` adds the HTTP processing on top. */
export class FilterCore {
  protected readonly decoding: ProcessorState;
  protected readonly encoding: ProcessorState;
  /** Envoy `processing_complete_`: nothing more is sent, responses are ignored. */
  protected complete = false;
  /** The decoding state's `sent_attributes_`. */
  private requestAttributesSent = false;
  private readonly stream: SideStream;

  constructor(
    protected readonly env: FilterEnv,
    protected readonly host: FilterHost,
    signal: AbortSignal,
    private readonly connection: DownstreamConnection,
  ) {
    this.decoding = new ProcessorState("request", env.config.processingMode);
    this.encoding = new ProcessorState("response", env.config.processingMode);
    this.stream = new SideStream(
      env.client,
      {
        onMessage: (response) => this.onMessage(response),
        onClose: () => this.onGrpcClose(),
        onError: (code, details) => this.onGrpcError(code, details),
      },
      env.registry,
      () => {
        env.stats.extProcStreamsStarted += 1;
      },
    );
    signal.addEventListener("abort", () => this.onDestroy(), { once: true });
  }

  /**
   * Sends a message that needs a response and waits for it (Envoy `onStartProcessorCall`);
   * `onResponse` applies the matching response when it arrives.
   */
  protected call(
    state: ProcessorState,
    kind: RequestKind,
    request: ProcessingRequest,
    onResponse: (response: ProcessingResponse__Output) => boolean,
  ): Promise<Outcome> {
    if (this.complete) return Promise.resolve("skip");
    this.send(kind, request);
    return new Promise((resolve) => {
      state.pending.push({ kind, onResponse, resolve });
      // Every message sent (re)starts its direction's timer.
      this.startTimer(state, this.env.config.messageTimeoutMs);
      state.timerExtended = false;
    });
  }

  /** Observability mode: send and go, no response expected. */
  protected sendAndGo(kind: RequestKind, request: ProcessingRequest): void {
    if (!this.complete) this.send(kind, { ...request, observability_mode: true });
  }

  private send(kind: RequestKind, request: ProcessingRequest): void {
    this.stream.send(this.withAttributes(kind, request));
    this.env.stats.extProcMessagesSent += 1;
    this.env.stats.extProcMessagesSentByKind[kind] += 1;
  }

  /**
   * `Filter::addAttributes`, called for every headers, body and trailers message: with
   * `request_attributes` configured, the first message of the request direction (request_headers
   * unless that mode is SKIP) carries them under the filter's name, evaluated then; later ones
   * carry none ("populated in the request_headers message", ext_proc.proto). The Struct is sent
   * even when no attribute has a value. `response_attributes` are not modelled.
   */
  private withAttributes(kind: RequestKind, request: ProcessingRequest): ProcessingRequest {
    const names = this.env.config.requestAttributes;
    if (this.requestAttributesSent || names.length === 0 || !kind.startsWith("request_")) return request;
    this.requestAttributesSent = true;
    return { ...request, attributes: { [EXT_PROC_FILTER_NAME]: evaluateAttributes(names, this.connection) } };
  }

  private startTimer(state: ProcessorState, ms: number): void {
    state.stopTimer();
    state.timer = setTimeout(() => this.onMessageTimeout(), ms);
  }

  private onMessage(response: ProcessingResponse__Output): void {
    // "Ignore response messages in the observability mode."
    if (this.env.config.observabilityMode || this.complete) return;
    if (response.override_message_timeout !== undefined) {
      this.onNewTimeout(response.override_message_timeout);
      return;
    }
    this.applyModeOverride(response);
    const kind = response.response;
    // setDecoderDynamicMetadata / setEncoderDynamicMetadata run for every response kind before it
    // is handled (an immediate response and an out-of-order one included), keeping only the
    // receiving namespaces.
    if (kind !== undefined) this.host.metadata.receive(response.dynamic_metadata, this.env.config.receivingNamespaces);
    if (kind === "immediate_response") {
      this.env.stats.extProcMessagesReceived += 1;
      this.onImmediateResponse(response.immediate_response ?? {});
      return;
    }
    const state = kind?.startsWith("request_") === true ? this.decoding : this.encoding;
    const head = state.pending[0];
    if (kind === undefined || head?.kind !== kind) {
      this.onSpurious();
      return;
    }
    this.env.stats.extProcMessagesReceived += 1;
    state.pending.shift();
    // onFinishProcessorCall stops the timer on every response, even with streamed chunks in flight.
    state.stopTimer();
    head.resolve(head.onResponse(response) ? "applied" : "abort");
  }

  /** mode_override counts only with allow_mode_override and while a headers call is in flight. */
  private applyModeOverride(response: ProcessingResponse__Output): void {
    if (response.mode_override === undefined) return;
    const inHeaders = this.decoding.inHeadersCallback() || this.encoding.inHeadersCallback();
    if (!this.env.config.allowModeOverride || !inHeaders) {
      this.env.stats.ignoredModeOverrides += 1;
      return;
    }
    const mode = effectiveModeOverride(resolveProcessingMode(response.mode_override), this.env.config.processingMode);
    this.decoding.setProcessingMode(mode);
    this.encoding.setProcessingMode(mode);
    this.env.stats.modeOverrides += 1;
  }

  /** A new timer once per call, within [1 ms, max_message_timeout]; otherwise ignored. */
  private onNewTimeout(duration: Duration__Output): void {
    const ms = durationMs(duration);
    const state = [this.decoding, this.encoding].find((s) => s.timer !== undefined && !s.timerExtended);
    if (ms < 1 || ms > this.env.config.maxMessageTimeoutMs || state === undefined) {
      this.env.stats.timeoutOverridesIgnored += 1;
      return;
    }
    this.startTimer(state, ms);
    state.timerExtended = true;
    this.env.stats.timeoutOverrides += 1;
  }

  private onImmediateResponse(response: ImmediateResponse__Output): void {
    this.complete = true;
    this.settleAll("abort");
    this.stream.closeGracefully();
    // "Ignoring attempt to set invalid HTTP status": codes below 200 become 200.
    const code = httpStatusNumber(response.status?.code);
    const mutation = response.headers;
    this.host.localReply({
      status: code >= 200 ? code : 200,
      body: response.body ?? Buffer.alloc(0),
      details: response.details ?? "",
      mutateHeaders: mutation === undefined ? undefined : (headers) => this.mutateLocalReply(headers, mutation),
    });
  }

  /** Immediate-response headers go through the filter's mutation rules; failures are only logged. */
  private mutateLocalReply(headers: HeaderMap, mutation: HeaderMutation__Output): void {
    const out = applyHeaderMutation(headers, mutation, this.env.checker, {
      direction: "response",
      replacingMessage: false,
      removeContentLength: false,
    });
    this.env.stats.ignoredMutations.push(...out.ignored);
    this.env.stats.headerValueFieldUsed += out.valueFieldUsed;
  }

  /**
   * A response of the wrong kind or with nothing outstanding: fail closed (status_on_error)
   * unless failure_mode_allow, which ignores the processor for the rest of the request
   * (runtime guard `ext_proc_fail_close_spurious_resp`, on by default).
   */
  private onSpurious(): void {
    this.env.stats.spuriousMessages += 1;
    if (this.env.config.failureModeAllow) {
      this.env.stats.failureModeAllowed += 1;
      this.continueWithoutProcessor(true);
    } else {
      this.errorResponse("spurious message");
    }
  }

  /** The server closed the stream cleanly: proceed without it. */
  private onGrpcClose(): void {
    if (this.complete) return;
    this.env.stats.streamsClosedByServer += 1;
    this.continueWithoutProcessor(false);
  }

  /** The stream failed: status_on_error (500), or proceed without it with failure_mode_allow. */
  private onGrpcError(code: grpc.status, details: string): void {
    this.env.stats.streamErrors += 1;
    if (this.complete) return;
    if (this.env.config.failureModeAllow) {
      this.env.stats.failureModeAllowed += 1;
      this.continueWithoutProcessor(false);
      return;
    }
    this.complete = true;
    this.settleAll("abort");
    this.host.localReply({
      status: this.env.config.statusOnError,
      body: Buffer.alloc(0),
      details: `ext_proc_error_gRPC_error_${code}{${details}}`,
    });
  }

  /** No response in time: 504, or proceed without the processor with failure_mode_allow. */
  private onMessageTimeout(): void {
    this.env.stats.timeouts += 1;
    if (this.env.config.failureModeAllow) {
      this.env.stats.failureModeAllowed += 1;
      this.continueWithoutProcessor(true);
      return;
    }
    this.complete = true;
    this.stream.closeNow();
    this.settleAll("abort");
    this.host.localReply({ status: 504, body: Buffer.alloc(0), details: "ext_proc_error_per-message_timeout_exceeded" });
  }

  /** Envoy `clearAsyncState`: calls in flight continue with their data unchanged. */
  private continueWithoutProcessor(closeStream: boolean): void {
    this.complete = true;
    if (closeStream) this.stream.closeNow();
    this.settleAll("skip");
  }

  /** Envoy `handleErrorResponse`: a local reply with status_on_error, stream reset. */
  protected errorResponse(details: string): void {
    this.complete = true;
    this.stream.closeNow();
    this.settleAll("abort");
    this.host.localReply({ status: this.env.config.statusOnError, body: Buffer.alloc(0), details });
  }

  private settleAll(outcome: Outcome): void {
    this.decoding.settleAll(outcome);
    this.encoding.settleAll(outcome);
  }

  /** Applies a header mutation to the held headers; false when it failed (local reply sent). */
  protected mutateHeaders(state: ProcessorState, mutation: HeaderMutation__Output, replacingMessage: boolean): boolean {
    if (state.headers === undefined) {
      this.ignoreHeaderMutation(state, mutation, "headers-already-sent");
      return true;
    }
    const out = applyHeaderMutation(state.headers, mutation, this.env.checker, {
      direction: state.direction,
      replacingMessage,
      removeContentLength: state.shouldRemoveContentLength(),
    });
    this.env.stats.ignoredMutations.push(...out.ignored);
    this.env.stats.headerValueFieldUsed += out.valueFieldUsed;
    if (!out.ok) this.errorResponse(out.error);
    return out.ok;
  }

  /** Records every entry of a header mutation Envoy drops without looking at it. */
  protected ignoreHeaderMutation(state: ProcessorState, mutation: HeaderMutation__Output, reason: IgnoreReason): void {
    const direction = state.direction;
    for (const header of mutation.remove_headers ?? []) {
      this.env.stats.ignoredMutations.push({ direction, header, operation: "remove", reason });
    }
    for (const option of mutation.set_headers ?? []) {
      const header = option.header?.key ?? "";
      this.env.stats.ignoredMutations.push({ direction, header, operation: "set", reason });
    }
  }

  /**
   * `clear_route_cache` takes effect on the request path and only with a header mutation in the
   * same response (`DecodingProcessorState::clearRouteCache`); otherwise it is counted as ignored.
   */
  protected clearRouteCache(state: ProcessorState, common: CommonResponse__Output): void {
    if (common.clear_route_cache !== true) return;
    if (state.direction === "response" || common.header_mutation === undefined) {
      this.env.stats.clearRouteCacheIgnored += 1;
      return;
    }
    this.env.stats.routeCacheClears += 1;
    this.host.clearRouteCache();
  }

  /** `closeGrpcStreamIfLastRespReceived`: half-close once nothing more will be sent. */
  protected closeIfLastResponse(kind: RequestKind, isLastBody: boolean): void {
    const d = this.decoding;
    const e = this.encoding;
    const last =
      (kind === "request_headers" && (d.noBody || (d.bodyMode === "NONE" && !d.sendTrailers)) && e.noExternalProcess()) ||
      (kind === "request_body" && isLastBody && e.noExternalProcess()) ||
      (kind === "response_headers" && (e.noBody || (e.bodyMode === "NONE" && !e.sendTrailers))) ||
      (kind === "response_body" && isLastBody);
    if (last) this.closeGracefully();
  }

  /** Envoy `closeStreamMaybeGraceful`. */
  protected closeGracefully(): void {
    this.complete = true;
    this.stream.closeGracefully();
  }

  /** End of the HTTP stream (Envoy `onDestroy`): stop timers, close or defer-close the stream. */
  onDestroy(): void {
    if (this.complete && !this.stream.opened) return;
    this.complete = true;
    this.settleAll("abort");
    if (this.env.config.observabilityMode) this.stream.closeDeferred(this.env.config.deferredCloseTimeoutMs);
    else this.stream.closeGracefully();
  }
}
