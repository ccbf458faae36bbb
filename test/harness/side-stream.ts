/**
 * The gRPC side stream of one HTTP request: Envoy's `ExternalProcessorStreamImpl` as seen by the
 * filter. Opens lazily on the first message, reports server messages, clean closes and errors, and
 * closes the three ways Envoy does (reset, half-close then reset after 1 s, deferred in
 * observability mode).
 */
import * as grpc from "@grpc/grpc-js";
import type { ExternalProcessorClient } from "../../proto/generated/envoy/service/ext_proc/v3/ExternalProcessor.ts";
import type { ProcessingRequest } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingRequest.ts";
import type { ProcessingResponse__Output } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingResponse.ts";

/** What the filter hears from its stream. */
export interface SideStreamEvents {
  onMessage(response: ProcessingResponse__Output): void;
  /** The server ended the stream with status OK. */
  onClose(): void;
  /** The stream ended with a non-OK status (server error, unreachable server…). */
  onError(code: grpc.status, details: string): void;
}

/** Envoy's remote close timeout after a half-close (`remote_close_timeout_milliseconds`, 1000). */
const REMOTE_CLOSE_TIMEOUT_MS = 1000;

type Call = grpc.ClientDuplexStream<ProcessingRequest, ProcessingResponse__Output>;

/** Open streams of one harness, so that `close()` can cancel what is left. */
export type StreamRegistry = Set<SideStream>;

/** One `Process` call, opened on first use. */
export class SideStream {
  private call: Call | undefined;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly client: ExternalProcessorClient,
    private readonly events: SideStreamEvents,
    private readonly registry: StreamRegistry,
    private readonly onOpen: () => void,
  ) {}

  /** Whether the stream was ever opened. */
  get opened(): boolean {
    return this.call !== undefined;
  }

  /** Sends a message, opening the stream first if needed (Envoy `openStream` + `send`). */
  send(request: ProcessingRequest): void {
    if (this.closed) return;
    this.open().write(request);
  }

  /** Envoy `closeStream`: half-close and reset at once. Events after this are dropped. */
  closeNow(): void {
    if (this.closed) return;
    this.closed = true;
    this.call?.end();
    this.call?.cancel();
    this.forget();
  }

  /** Envoy `halfCloseAndDeleteOnRemoteClose`: half-close, reset if the server has not closed in 1 s. */
  closeGracefully(): void {
    this.closeAfter(REMOTE_CLOSE_TIMEOUT_MS, true);
  }

  /** Envoy `deferredCloseStream` (observability mode): keep the stream, reset it after `ms`. */
  closeDeferred(ms: number): void {
    this.closeAfter(ms, false);
  }

  private closeAfter(ms: number, halfCloseNow: boolean): void {
    if (this.closed) return;
    this.closed = true;
    const call = this.call;
    if (call === undefined) return;
    if (halfCloseNow) call.end();
    this.timer = setTimeout(() => {
      call.end();
      call.cancel();
      this.forget();
    }, ms);
    this.timer.unref();
  }

  private forget(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.call !== undefined) this.registry.delete(this);
  }

  /** Cancels the call whatever its state (harness shutdown). */
  cancel(): void {
    this.closed = true;
    this.call?.cancel();
    this.forget();
  }

  private open(): Call {
    if (this.call !== undefined) return this.call;
    const call = this.client.Process();
    this.call = call;
    this.registry.add(this);
    this.onOpen();
    call.on("data", (response: ProcessingResponse__Output) => {
      if (!this.closed) this.events.onMessage(response);
    });
    // 'error' carries the same status as 'status'; a listener keeps it from being thrown.
    call.on("error", () => undefined);
    call.on("status", (status: grpc.StatusObject) => {
      const wasClosed = this.closed;
      this.closed = true;
      this.forget();
      if (wasClosed) return;
      if (status.code === grpc.status.OK) this.events.onClose();
      else this.events.onError(status.code, status.details);
    });
    return call;
  }
}
