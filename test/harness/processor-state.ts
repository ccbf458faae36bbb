/**
 * Per-direction state of the ext_proc filter: Envoy's `DecodingProcessorState` (request) and
 * `EncodingProcessorState` (response) from `processor_state.{h,cc}`: the effective processing
 * mode, the outstanding calls with their message timer, and the headers held back while the
 * processor may still change them.
 */
import type { BodySendMode, ResolvedProcessingMode } from "./config.ts";
import type { HeaderMap } from "./headers.ts";
import type { Direction, RequestKind } from "./stats.ts";
import type { ProcessingResponse__Output } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingResponse.ts";

/**
 * How an outstanding call ended for the code waiting on it:
 * - `applied`: the matching response arrived and was applied;
 * - `skip`: processing is complete (stream closed, failure_mode_allow…): continue with the data as is;
 * - `abort`: the HTTP exchange is over (local reply sent or stream reset): stop.
 */
export type Outcome = "applied" | "skip" | "abort";

/** One message sent that waits for its response. */
export interface PendingCall {
  kind: RequestKind;
  /**
   * Applies the matching response synchronously, as Envoy's `handle*Response` does inside
   * `onReceiveMessage`, so the next message is judged against the new state; false when it failed
   * (a local reply was sent).
   */
  onResponse: (response: ProcessingResponse__Output) => boolean;
  resolve: (outcome: Outcome) => void;
}

/** The state of one direction of the filter. */
export class ProcessorState {
  sendHeaders = true;
  sendTrailers = false;
  bodyMode: BodySendMode = "NONE";
  /** end_stream came with the headers. */
  noBody = false;
  /** Headers still held by the filter (undefined once they have been forwarded). */
  headers: HeaderMap | undefined;
  /** Calls in flight, oldest first (Envoy's callback state plus its chunk queue). */
  readonly pending: PendingCall[] = [];
  /** The per-message timer (Envoy `message_timer_`) and whether it was extended once already. */
  timer: NodeJS.Timeout | undefined;
  timerExtended = false;

  constructor(
    readonly direction: Direction,
    mode: ResolvedProcessingMode,
  ) {
    this.setProcessingMode(mode);
  }

  get headersKind(): RequestKind {
    return this.direction === "request" ? "request_headers" : "response_headers";
  }

  get bodyKind(): RequestKind {
    return this.direction === "request" ? "request_body" : "response_body";
  }

  /**
   * `setProcessingModeInternal`: headers are sent unless SKIP, trailers only when SEND ("the
   * different default behaviors of headers and trailers").
   */
  setProcessingMode(mode: ResolvedProcessingMode): void {
    const request = this.direction === "request";
    this.sendHeaders = (request ? mode.request_header_mode : mode.response_header_mode) !== "SKIP";
    this.sendTrailers = (request ? mode.request_trailer_mode : mode.response_trailer_mode) === "SEND";
    this.bodyMode = request ? mode.request_body_mode : mode.response_body_mode;
  }

  /**
   * `shouldRemoveContentLength`: STREAMED, BUFFERED_PARTIAL, and BUFFERED without a headers call,
   * because then the processor cannot keep content-length right if it changes the body.
   */
  shouldRemoveContentLength(): boolean {
    switch (this.bodyMode) {
      case "STREAMED":
      case "BUFFERED_PARTIAL":
        return true;
      case "BUFFERED":
        return !this.sendHeaders;
      case "NONE":
        return false;
      default: {
        const unknown: never = this.bodyMode;
        throw new Error(`unknown body mode ${String(unknown)}`);
      }
    }
  }

  /** Nothing of this direction goes to the processor (Envoy `noExternalProcess`). */
  noExternalProcess(): boolean {
    return !this.sendHeaders && this.bodyMode === "NONE" && !this.sendTrailers;
  }

  /** The oldest call in flight is a headers call (Envoy `HeadersCallback` state). */
  inHeadersCallback(): boolean {
    return this.pending[0]?.kind === this.headersKind;
  }

  /** Stops the message timer (Envoy `stopMessageTimer`). */
  stopTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Ends every call in flight with `outcome` (Envoy `clearAsyncState` / `onFinishProcessorCall`). */
  settleAll(outcome: Outcome): void {
    this.stopTimer();
    for (const call of this.pending.splice(0)) call.resolve(outcome);
  }
}
